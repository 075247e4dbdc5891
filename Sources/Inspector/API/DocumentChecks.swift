import Foundation
import HTTPTypes
import OpenAPIRuntime
import Utilities

/// What the API document says a request may carry, read from `openapi.json` itself: each
/// operation's query and path parameters (their types, enums and minimums) and its JSON body's
/// schema. The generated server decodes what the document declares and ignores what it does
/// not; these checks run first, so that an unknown filter, a value outside its type or enum, or a
/// body that does not fit is a 400 that names the parameter or field and what it takes.
struct APIDocument: Sendable {
    /// The subset of JSON Schema the document uses.
    final class Schema: Decodable, Sendable {
        let type: String?
        let `enum`: [String]?
        let minimum: Double?
        let required: [String]?
        let properties: [String: Schema]?
        let items: Schema?
        let ref: String?
        /// `false`: an object with no fields but its properties.
        let additionalProperties: JSONValue?

        enum CodingKeys: String, CodingKey {
            case type, `enum`, minimum, required, properties, items, additionalProperties
            case ref = "$ref"
        }
    }
    struct Parameter: Decodable, Sendable {
        let name: String
        let location: String
        let schema: Schema

        enum CodingKeys: String, CodingKey {
            case name, schema
            case location = "in"
        }
    }
    struct Operation: Decodable, Sendable {
        struct Body: Decodable, Sendable {
            struct Media: Decodable, Sendable { let schema: Schema? }
            let content: [String: Media]
        }
        let operationId: String
        let parameters: [Parameter]?
        let requestBody: Body?
        var method = ""
        var path = ""

        enum CodingKeys: String, CodingKey { case operationId, parameters, requestBody }
    }
    private struct File: Decodable {
        struct Components: Decodable { let schemas: [String: Schema] }
        let paths: [String: [String: Operation]]
        let components: Components
    }

    let operations: [String: Operation]
    let schemas: [String: Schema]

    init(json: [UInt8]) throws {
        let file = try JSONDecoder().decode(File.self, from: Data(json))
        var operations: [String: Operation] = [:]
        for (path, methods) in file.paths {
            for (method, var operation) in methods {
                operation.method = method.uppercased()
                operation.path = path
                operations[operation.operationId] = operation
            }
        }
        self.operations = operations
        schemas = file.components.schemas
    }

    /// The schema `schema` stands for (following a `$ref` to the document's components).
    func resolve(_ schema: Schema) -> Schema {
        guard let ref = schema.ref, let name = ref.split(separator: "/").last.map(String.init), let target = schemas[name] else { return schema }
        return resolve(target)
    }

    /// Why `value` does not fit the parameter `name`'s schema, or `nil`.
    func problem(with value: String, named name: String, _ schema: Schema) -> String? {
        let schema = resolve(schema)
        if let allowed = schema.enum, !allowed.contains(value) { return "\(name) is \(Self.alternatives(allowed)), not \(value)" }
        switch schema.type {
        case "integer":
            guard let number = Int(value) else { return "\(name) is an integer, not \(value)" }
            if let minimum = schema.minimum, Double(number) < minimum { return "\(name) is at least \(Int(minimum)), not \(value)" }
        case "boolean":
            guard value == "true" || value == "false" else { return "\(name) is true or false, not \(value)" }
        default: break
        }
        return nil
    }

    /// Why the JSON value `value` does not fit `schema`, or `nil`; `name` is where it is in the
    /// body (`faults[2]`).
    func problem(withJSON value: JSONValue, named name: String, _ schema: Schema) -> String? {
        let schema = resolve(schema)
        let what = name.isEmpty ? "the body" : name
        switch (schema.type, value) {
        case ("object", .object(let object)):
            for field in schema.required ?? [] where object[field] == nil || object[field] == .null {
                return "\(name.isEmpty ? "" : name + ".")\(field) is required"
            }
            if schema.additionalProperties == .bool(false), let unknown = object.keys.sorted().first(where: { schema.properties?[$0] == nil }) {
                return "\(what) has no field \(unknown)"
            }
            for (field, fieldSchema) in (schema.properties ?? [:]).sorted(by: { $0.key < $1.key }) {
                guard let fieldValue = object[field], fieldValue != .null else { continue }
                if let problem = problem(withJSON: fieldValue, named: name.isEmpty ? field : "\(name).\(field)", fieldSchema) { return problem }
            }
        case ("object", _): return "\(what) is a JSON object"
        case ("array", .array(let array)):
            for (index, item) in array.enumerated() {
                if let items = schema.items, let problem = problem(withJSON: item, named: "\(what)[\(index)]", items) { return problem }
            }
        case ("array", _): return "\(what) is a JSON array"
        case ("string", .string(let string)):
            if let allowed = schema.enum, !allowed.contains(string) { return "\(what) is \(Self.alternatives(allowed)), not \(string)" }
        case ("string", _): return "\(what) is a string"
        case ("integer", .number(let number)) where number == number.rounded(): break
        case ("integer", _): return "\(what) is an integer"
        case ("boolean", .bool): break
        case ("boolean", _): return "\(what) is true or false"
        default: break
        }
        return nil
    }

    static func alternatives(_ values: [String]) -> String {
        values.count == 2 ? "\(values[0]) or \(values[1])" : "one of \(values.joined(separator: ", "))"
    }
}

/// The document's checks as a server middleware of the generated server: they see each request
/// before its input is decoded (see ``APIDocument``).
struct DocumentChecks: ServerMiddleware {
    let document: APIDocument
    /// The most a JSON body may hold.
    static let bodyLimit = 1_000_000

    func intercept(_ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?))
    async throws -> (HTTPResponse, HTTPBody?) {
        guard let operation = document.operations[operationID] else { return try await next(request, body, metadata) }
        let parameters = operation.parameters ?? []

        let query = parameters.filter { $0.location == "query" }
        for item in URLComponents(string: request.path ?? "")?.queryItems ?? [] {
            guard let parameter = query.first(where: { $0.name == item.name }) else {
                throw InspectorError(.badRequest, query.isEmpty ? "unknown filter \(item.name): \(operation.method) \(operation.path) takes no query parameters"
                                     : "unknown filter \(item.name); filters: \(query.map(\.name).joined(separator: ", "))")
            }
            if let problem = document.problem(with: item.value ?? "", named: item.name, parameter.schema) { throw InspectorError(.badRequest, problem) }
        }
        for parameter in parameters where parameter.location == "path" {
            guard let value = metadata.pathParameters[parameter.name] else { continue }
            if let problem = document.problem(with: String(value), named: parameter.name, parameter.schema) { throw InspectorError(.badRequest, problem) }
        }

        guard let schema = operation.requestBody?.content["application/json"]?.schema else { return try await next(request, body, metadata) }
        let bytes: [UInt8]
        do { bytes = if let body { try await [UInt8](collecting: body, upTo: Self.bodyLimit) } else { [] } } catch {
            throw InspectorError(.contentTooLarge, "the body is larger than \(Self.bodyLimit) bytes")
        }
        let takes = "\(operation.method) \(operation.path) takes \(Self.describe(document.resolve(schema), document))"
        let value: JSONValue
        do { value = try JSONDecoder().decode(JSONValue.self, from: Data(bytes)) } catch {
            throw InspectorError(.badRequest, "the body is not JSON: \(takes)")
        }
        if let problem = document.problem(withJSON: value, named: "", schema) { throw InspectorError(.badRequest, "\(problem): \(takes)") }
        // A body that fits is read as JSON whatever its content-type says, as before the API was
        // generated (`curl -d` sends application/x-www-form-urlencoded); the document says so.
        var request = request
        request.headerFields[.contentType] = "application/json"
        return try await next(request, HTTPBody(bytes), metadata)
    }

    /// `{"faults": [string]}`, for error messages.
    static func describe(_ schema: APIDocument.Schema, _ document: APIDocument) -> String {
        let schema = document.resolve(schema)
        switch schema.type {
        case "object":
            let required = Set(schema.required ?? [])
            let fields = (schema.properties ?? [:]).sorted { (required.contains($0.key) ? 0 : 1, $0.key) < (required.contains($1.key) ? 0 : 1, $1.key) }
                .map { "\"\($0.key)\"\(required.contains($0.key) ? "" : "?"): \(describe($0.value, document))" }
            return "{\(fields.joined(separator: ", "))}"
        case "array": return "[\(schema.items.map { describe($0, document) } ?? "any")]"
        default: return schema.enum.map { $0.joined(separator: "|") } ?? schema.type ?? "any"
        }
    }
}
