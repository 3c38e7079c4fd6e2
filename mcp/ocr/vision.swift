// Prints the text Vision recognizes in an image or in each page of a PDF.
// Usage: swift ocr.swift <path> <image|pdf>
import Foundation
import Vision
import PDFKit
import AppKit

func recognize(_ image: CGImage) -> String {
    let request = VNRecognizeTextRequest()
    request.recognitionLevel = .accurate
    request.usesLanguageCorrection = true
    let handler = VNImageRequestHandler(cgImage: image, options: [:])
    try? handler.perform([request])
    let lines = (request.results ?? []).compactMap { $0.topCandidates(1).first?.string }
    return lines.joined(separator: "\n")
}

let args = CommandLine.arguments
guard args.count >= 3 else { exit(2) }
let url = URL(fileURLWithPath: args[1])
if args[2] == "pdf" {
    guard let doc = PDFDocument(url: url) else { exit(1) }
    var out: [String] = []
    for i in 0..<min(doc.pageCount, 50) {
        guard let page = doc.page(at: i) else { continue }
        let size = page.bounds(for: .mediaBox).size
        let img = page.thumbnail(of: NSSize(width: size.width * 2, height: size.height * 2), for: .mediaBox)
        guard let cg = img.cgImage(forProposedRect: nil, context: nil, hints: nil) else { continue }
        out.append("--- page \(i + 1) ---\n" + recognize(cg))
    }
    print(out.joined(separator: "\n\n"))
} else {
    guard let img = NSImage(contentsOf: url),
          let cg = img.cgImage(forProposedRect: nil, context: nil, hints: nil) else { exit(1) }
    print(recognize(cg))
}
