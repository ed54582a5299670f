// HMACMessageAuthenticator lives in the NotificatableAuthentication package (swift-crypto only), so that a user of the
// loopback or macOS transport can authenticate relay messages without postgres-nio. It is re-exported here, so code
// that imports NotificatablePostgres alone keeps compiling.
@_exported import NotificatableAuthentication
