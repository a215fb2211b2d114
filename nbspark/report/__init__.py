"""What people read: reports, metrics and plots. Pure."""
