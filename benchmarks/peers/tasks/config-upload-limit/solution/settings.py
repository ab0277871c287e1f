"""The service's settings."""

MAX_UPLOAD_MB = 25
ALLOWED_TYPES = ("png", "jpg", "pdf")
