// MARK: - Issue 3: the typed-handle delivery workloads

import Foundation
import Notificatable

/// The typed workloads, mirroring ``RawDelivery``: a private center per factory, synchronous delivery, one
/// `counter.record` per delivery, checked by `postAndCount`.
func typedDeliveryWorkloads() -> DeliveryWorkloads? {
    let handle = Notificatable<BenchPayload>.name("NotificatableBench.typed")
    let payloadPost: (Int) -> BatchFactory = { crowd in
        {
            let center = NotificationCenter()
            let counter = DeliveryCounter()
            let bag = DisposeBag()
            for i in 0..<crowd {
                Notificatable<BenchPayload>.name("NotificatableBench.other.\(i)")
                    .subscribe(center: center) { _ in counter.record(-1) }
                    .store(in: bag)
            }
            handle.subscribe(center: center) { note in counter.record(note.userInfo.value) }.store(in: bag)
            let payload = BenchPayload(value: 42)
            return { n in
                try withExtendedLifetime(bag) { try postAndCount(n, counter) { handle.post(payload, center: center) } }
            }
        }
    }
    let keyboardPost: BatchFactory = {
        let center = NotificationCenter()
        let counter = DeliveryCounter()
        let keyboard = RawDelivery.keyboardName
            .notificatable(userInfoType: KeyboardInfo.self, decoder: CoderWorkloads.makeDecoder())
        let subscription = keyboard.subscribe(center: center) { note in
            counter.record(Int(truncatingIfNeeded: note.userInfo.digest))
        }
        // A legacy post, as the system makes it: the raw center call with the NSValue-form userInfo.
        let userInfo = KeyboardFixture.nsValueForm()
        return { n in
            try withExtendedLifetime(subscription) {
                try postAndCount(n, counter) {
                    center.post(name: RawDelivery.keyboardName, object: nil, userInfo: userInfo)
                }
            }
        }
    }
    return DeliveryWorkloads(
        flavour: "typed", payloadPost: payloadPost(0), keyboardPost: keyboardPost, payloadPostWithCrowd: payloadPost
    )
}
