enum NotificatableTestingPlaceholder {}
