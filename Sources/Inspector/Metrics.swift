import AuthBackend
import Foundation

/// `/metrics` in Prometheus' text format (version 0.0.4), written by hand: a few counters and
/// gauges do not need swift-prometheus (and its build).
enum Metrics {
    static func text(_ sources: InspectorSources) async -> String {
        var lines: [String] = []
        func help(_ name: String, _ text: String, _ type: String) {
            lines.append("# HELP \(name) \(text)")
            lines.append("# TYPE \(name) \(type)")
        }
        func label(_ value: String) -> String {
            value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
        }
        help("authsim_pushes_total", "Pushes push-receiver answered, by environment, HTTP status and APNs reason (empty for 200).", "counter")
        for key in sources.history.counters.sorted(by: { ($0.environment, $0.status, $0.reason) < ($1.environment, $1.status, $1.reason) }) {
            lines.append("authsim_pushes_total{environment=\"\(label(key.environment))\",status=\"\(key.status)\",reason=\"\(label(key.reason))\"} \(key.count)")
        }
        help("authsim_inspector_pushes_in_view", "Pushes the inspector keeps in view (at most --max-pushes).", "gauge")
        lines.append("authsim_inspector_pushes_in_view \(sources.history.all.count)")
        help("authsim_inspector_pushes_dropped_from_view_total", "Pushes dropped from the view to keep it at --max-pushes (never from the delivery log).", "counter")
        lines.append("authsim_inspector_pushes_dropped_from_view_total \(sources.history.droppedFromView)")
        help("authsim_inspector_subscribers", "Live /api/v1/events streams.", "gauge")
        lines.append("authsim_inspector_subscribers \(sources.history.subscriberCount)")
        help("authsim_devices", "Devices in push-receiver's registry, by environment and state.", "gauge")
        var devices: [String: Int] = [:]
        for device in sources.registry.all { devices["environment=\"\(device.environment.rawValue)\",state=\"\(device.state.rawValue)\"", default: 0] += 1 }
        for (labels, count) in devices.sorted(by: { $0.key < $1.key }) { lines.append("authsim_devices{\(labels)} \(count)") }
        help("authsim_faults", "Fault rules in force on push-receiver.", "gauge")
        lines.append("authsim_faults \(sources.faults.current.count)")
        if let toolkit = sources.toolkit {
            help("authsim_backend_request_duration_seconds", "How long the backend took to answer, by route and HTTP status.", "histogram")
            for (key, histogram) in toolkit.requestMetrics.snapshot.sorted(by: { $0.key < $1.key }) {
                let labels = "route=\"\(label(key.route))\",status=\"\(key.status)\""
                var cumulative = 0
                for (index, bound) in RequestMetrics.bounds.enumerated() {
                    cumulative += histogram.buckets[index]
                    lines.append("authsim_backend_request_duration_seconds_bucket{\(labels),le=\"\(bound)\"} \(cumulative)")
                }
                lines.append("authsim_backend_request_duration_seconds_bucket{\(labels),le=\"+Inf\"} \(histogram.count)")
                lines.append("authsim_backend_request_duration_seconds_sum{\(labels)} \(histogram.sum)")
                lines.append("authsim_backend_request_duration_seconds_count{\(labels)} \(histogram.count)")
            }
            // A fleet node reads them from the store: a store away leaves them out, not zero.
            if let users = try? await toolkit.users() {
                help("authsim_users", "Users the backend knows.", "gauge")
                lines.append("authsim_users \(users.count)")
            }
            if let sent = try? await toolkit.sentMessages() {
                help("authsim_sms_total", "SMS the backend sent (kept for a day).", "counter")
                lines.append("authsim_sms_total \(sent.count)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
