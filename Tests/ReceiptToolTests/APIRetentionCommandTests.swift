// `receipt-tool api retention …` against the simulated App Store Server on 127.0.0.1: Apple's
// method, path, query, body and content type for each request, the answer printed, and every
// malformed local value refused (exit 64) before any request.

import AppStoreServerAPI
import Foundation
import JSON
import StoreTesting
import TestSupport
import Testing

@Suite("receipt-tool api retention")
@MainActor
struct APIRetentionCommandTests {
    func write(_ bytes: [UInt8], _ name: String, in world: APIToolWorld) throws -> String {
        let url = world.directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    /// A PNG's framing with the given size and colour type (what Upload Image checks).
    func png(width: Int, height: Int, colourType: UInt8 = 2) -> [UInt8] {
        func be32(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
        let ihdr = Array("IHDR".utf8) + be32(width) + be32(height) + [8, colourType, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be32(13) + ihdr + [0, 0, 0, 0] + be32(0) + Array("IEND".utf8) + [
            0, 0, 0, 0,
        ]
    }

    @Test func retentionSubcommands_sendApplesRequests_andPrintTheAnswer() async throws {
        let world = try APIToolWorld()
        let common = world.common
        let image = "0d4f6a3e-5b7c-4d8e-9f10-1a2b3c4d5e6f"
        let message = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        let picture = png(width: 3840, height: 320)
        let imageFile = try write(picture, "full.png", in: world)
        let upload = try await tool(
            ["api", "retention", "image-upload", image, "--image", imageFile, "--image-size", "FULL_SIZE", "--json"] + common)
        #expect(upload.status == 0, "\(upload.stderr)")
        #expect(try APIToolWorld.lines(upload.stdout).first?["uploaded"] == .bool(true))
        let body =
            #"{"header": "Before you go", "body": "Half price for three months.", "image": {"imageIdentifier": "\#(image)", "altText": "A calendar"}, "headerPosition": "ABOVE_IMAGE"}"#
        let bodyFile = try write(Array(body.utf8), "message.json", in: world)
        let sent = try await tool(["api", "retention", "message-upload", message, "--body", bodyFile] + common)
        #expect(sent.status == 0 && sent.stdout.contains("Message \(message) uploaded"), "\(sent.stderr)")
        let messages = try await tool(["api", "retention", "messages", "--json"] + common)
        #expect(
            try APIToolWorld.lines(messages.stdout) == [
                .object([("messageIdentifier", .string(message)), ("messageState", .string("APPROVED"))])
            ])
        let images = try await tool(["api", "retention", "images"] + common)
        #expect(images.stdout.contains("Image \"\(image)\" APPROVED FULL_SIZE"))
        let set = try await tool(["api", "retention", "default-set", "com.example.monthly", "en-US", message] + common)
        #expect(set.status == 0, "\(set.stderr)")
        let shown = try await tool(["api", "retention", "default", "com.example.monthly", "en-US", "--json"] + common)
        #expect(try APIToolWorld.lines(shown.stdout).first?["messageIdentifier"] == .string(message))
        for arguments in [["default-delete", "com.example.monthly", "en-US"], ["message-delete", message], ["image-delete", image]] {
            let result = try await tool(["api", "retention"] + arguments + common)
            #expect(result.status == 0, "\(result.stderr)")
        }
        // Apple's answer to a missing default is an error: exit 1 with its code.
        let missing = try await tool(["api", "retention", "default", "com.example.monthly", "en-US"] + common)
        #expect(missing.status == 1 && missing.stderr.contains("4040020"))

        let requests = world.server.requests
        #expect(
            requests.map { "\($0.method) \($0.path)\($0.query.map { "?" + $0 } ?? "")" } == [
                "PUT /inApps/v1/messaging/image/\(image)?imageSize=FULL_SIZE", "PUT /inApps/v1/messaging/message/\(message)",
                "GET /inApps/v1/messaging/message/list", "GET /inApps/v1/messaging/image/list",
                "PUT /inApps/v1/messaging/default/com.example.monthly/en-US", "GET /inApps/v1/messaging/default/com.example.monthly/en-US",
                "DELETE /inApps/v1/messaging/default/com.example.monthly/en-US", "DELETE /inApps/v1/messaging/message/\(message)",
                "DELETE /inApps/v1/messaging/image/\(image)", "GET /inApps/v1/messaging/default/com.example.monthly/en-US",
            ])
        #expect(requests[0].contentType == "image/png" && requests[0].body == picture)
        #expect(try JSONValue.parse(requests[1].body) == (try JSONValue.parse(Array(body.utf8))))
        #expect(try JSONValue.parse(requests[4].body) == .object([("messageIdentifier", .string(message))]))
        #expect(requests.allSatisfy { $0.rejection == nil })
        await world.finish()
    }

    @Test func malformedRetentionValues_exit64_beforeAnyRequest() async throws {
        let world = try APIToolWorld()
        let common = world.common
        let longHeader = #"{"header": "\#(String(repeating: "x", count: 67))", "body": "b"}"#
        let transparent = try write(png(width: 96, height: 96, colourType: 6), "alpha.png", in: world)
        let narrow = try write(png(width: 1000, height: 320), "narrow.png", in: world)
        let cases: [[String]] = [
            ["message-upload", "not-a-uuid", "--body", try write(Array(longHeader.utf8), "a.json", in: world)],
            ["message-upload", "7e3fb20b-4cdb-47cc-936d-99d65f608138", "--body", try write(Array(longHeader.utf8), "b.json", in: world)],
            ["image-upload", "7e3fb20b-4cdb-47cc-936d-99d65f608138", "--image", transparent],
            ["image-upload", "7e3fb20b-4cdb-47cc-936d-99d65f608138", "--image", narrow, "--image-size", "FULL_SIZE"],
            ["image-upload", "7e3fb20b-4cdb-47cc-936d-99d65f608138", "--image", narrow, "--image-size", "HUGE"],
            ["default", "com.example.monthly", "english!"],
            ["default-set", "com.example.monthly", "en-US", "1234"],
            ["message-delete"],
            ["unknown"],
        ]
        for arguments in cases {
            let result = try await tool(["api", "retention"] + arguments + common)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
        }
        #expect(world.server.requests.isEmpty)
        let help = try await tool(["api", "--help"])
        #expect(help.stdout.contains("retention image-upload <uuid> --image <file.png>"))
        await world.finish()
    }
}
