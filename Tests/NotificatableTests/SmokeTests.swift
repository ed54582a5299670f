import Testing
import Notificatable

@Test func decoderExists() {
    _ = UserInfoDecoder()
}
