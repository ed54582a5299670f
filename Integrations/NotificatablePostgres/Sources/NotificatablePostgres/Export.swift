// A server app reaches every public type it needs through `import NotificatablePostgres` alone: the handles it
// posts and receives (`Notificatable`, from the Notificatable library) and the relay they travel through
// (`NotificationRelay`, `NotificationTransport`, their events, from NotificatableRelay) appear in this module's own
// public API, so a file that imports only this module should be able to name them. Without the re-export, the
// quick start's `Notificatable.orderPlaced` failed with "cannot find 'Notificatable' in scope" (issue 42).
@_exported import Notificatable
@_exported import NotificatableRelay
