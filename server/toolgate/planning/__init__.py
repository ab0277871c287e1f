"""Plans of capability steps, gap reports, and workflows that run them through the gate."""
