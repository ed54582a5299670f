// The Combine block of the DocC article *Threading, Delivery and Disposal*, verbatim (imports aside: OpenCombine stands
// in for Combine here).
//
// The article (Sources/Notificatable/Documentation.docc/ThreadingDeliveryAndDisposal.md) marks the block with
// `<!-- readme-example: <this file> -->`, so `DocCExamplesTests` in the root package checks that the text matches,
// and `scripts/check-combine.sh` compiles and runs it against OpenCombine.

import Foundation
import Notificatable
import NotificatableCombine
import OpenCombine
import Testing

let cartDidChange = Notificatable<Int>.name("CartDidChange")

final class CartBadge {
    private(set) var count = 0
    private var cancellables = Set<AnyCancellable>()

    init(center: NotificationCenter = .default) {
        cartDidChange.publisher(center: center)
            .removeDuplicates()
            .sink { [weak self] count in self?.count = count }
            .store(in: &cancellables)
    }
}

@Suite struct CombineArticleExampleTests {
    @Test func theBadgeFollowsTheCart() {
        let center = NotificationCenter()
        let badge = CartBadge(center: center)
        cartDidChange.post(3, center: center)
        #expect(badge.count == 3)
        cartDidChange.post(5, center: center)
        #expect(badge.count == 5)
    }
}
