// The Notificatable module, where the adapter ships, declares top-level types whose names Combine also uses. Inside
// that module they shadow Combine's; declaring them here too makes the check build fail on any bare use of them in
// the adapter, as an Apple build of the library would.
final class Subscription {}
