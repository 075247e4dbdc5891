/// The value of `apns-push-type`.
///
/// A struct around the wire string so that types Apple adds later can still be carried; the
/// receiver accepts only ``all``.
package struct APNsPushType: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package var description: String { rawValue }

    package static let alert = APNsPushType(rawValue: "alert")
    package static let background = APNsPushType(rawValue: "background")
    package static let complication = APNsPushType(rawValue: "complication")
    package static let controls = APNsPushType(rawValue: "controls")
    package static let fileprovider = APNsPushType(rawValue: "fileprovider")
    package static let liveactivity = APNsPushType(rawValue: "liveactivity")
    package static let location = APNsPushType(rawValue: "location")
    package static let mdm = APNsPushType(rawValue: "mdm")
    package static let pushtotalk = APNsPushType(rawValue: "pushtotalk")
    package static let voip = APNsPushType(rawValue: "voip")
    package static let widgets = APNsPushType(rawValue: "widgets")

    /// Every push type Apple defines.
    package static let all: [APNsPushType] = [
        .alert, .background, .complication, .controls, .fileprovider, .liveactivity, .location, .mdm,
        .pushtotalk, .voip, .widgets,
    ]

    /// Whether Apple defines this push type.
    package var isKnown: Bool { Self.all.contains(self) }

    /// The suffix Apple requires on `apns-topic` for this push type (`nil`: the bare bundle ID).
    /// `mdm` topics are an MDM certificate's UID and are not checked.
    package var requiredTopicSuffix: String? {
        switch rawValue {
        case "complication": return ".complication"
        case "controls": return ".push-type.controls"
        case "fileprovider": return ".pushkit.fileprovider"
        case "liveactivity": return ".push-type.liveactivity"
        case "location": return ".location-query"
        case "pushtotalk": return ".voip-ptt"
        case "voip": return ".voip"
        case "widgets": return ".push-type.widgets"
        default: return nil
        }
    }

    /// The largest payload in bytes Apple accepts for this push type.
    package var maximumPayloadSize: Int { self == .voip ? 5120 : 4096 }

    /// The bundle ID a topic names for this push type (the topic with its required suffix removed).
    package func bundleID(forTopic topic: String) -> String {
        if let suffix = requiredTopicSuffix, topic.hasSuffix(suffix) { return String(topic.dropLast(suffix.count)) }
        return topic
    }
}

/// The value of `apns-priority`: 10 (immediately), 5 (power-considerate, required for background),
/// or 1 (lowest).
package struct APNsPriority: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    package let rawValue: Int
    package init?(rawValue: Int) {
        switch rawValue {
        case 1, 5, 10: break
        default: return nil
        }
        self.rawValue = rawValue
    }
    package var description: String { String(rawValue) }

    package static let immediate = APNsPriority(rawValue: 10)!
    package static let consideringPower = APNsPriority(rawValue: 5)!
    package static let low = APNsPriority(rawValue: 1)!

    /// The priority Apple applies when a push type is sent without `apns-priority`.
    package static func `default`(for pushType: APNsPushType) -> APNsPriority {
        pushType == .background ? .consideringPower : .immediate
    }
}
