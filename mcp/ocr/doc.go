// Package ocr is the builtin OCR preset of the mcp package (seed §15.6): an
// in-process MCP server with one tool, recognize, that extracts the text of
// an image or a PDF. It tries macOS Vision (on macOS), then tesseract (when
// installed; PDFs are rasterized with pdftoppm), then the session's
// multimodal model, and says which engines were missing when none works.
//
// Concurrency: the server and Recognize are safe for concurrent use; each
// call runs its helper programs in their own process group, killed when the
// call's context ends.
package ocr
