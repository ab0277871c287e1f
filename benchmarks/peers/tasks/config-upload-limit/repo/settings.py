"""The service's settings."""

MAX_UPLOAD_MB = 10
ALLOWED_TYPES = ("png", "jpg", "pdf")
