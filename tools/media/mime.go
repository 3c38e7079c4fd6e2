package media

import (
	"mime"
	"net/http"
	"path"
	"strings"
)

// Attachment limits (seed §13).
const (
	MaxAttachments     = 4        // files per message (per turn for the media tool)
	MaxAttachmentBytes = 10 << 20 // bytes per file and in total
	AttachmentDir      = "attachments"
)

// extTypes maps extensions to media types; it does not depend on the OS's
// MIME tables, which differ between Linux, macOS and Windows.
var extTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".bmp": "image/bmp", ".tif": "image/tiff", ".tiff": "image/tiff",
	".heic": "image/heic", ".heif": "image/heif", ".avif": "image/avif", ".ico": "image/x-icon",
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg", ".oga": "audio/ogg",
	".flac": "audio/flac", ".m4a": "audio/mp4", ".aac": "audio/aac", ".opus": "audio/opus",
	".weba": "audio/webm", ".aiff": "audio/aiff", ".mid": "audio/midi", ".midi": "audio/midi",
	".mp4": "video/mp4", ".m4v": "video/mp4", ".mov": "video/quicktime", ".webm": "video/webm",
	".mkv": "video/x-matroska", ".avi": "video/x-msvideo", ".mpeg": "video/mpeg", ".mpg": "video/mpeg",
	".ogv": "video/ogg", ".3gp": "video/3gpp",
}

// typeExt is the preferred extension of a media type.
func typeExt(mt string) string {
	best := ""
	for ext, t := range extTypes {
		if t == mt && (best == "" || len(ext) < len(best) || len(ext) == len(best) && ext < best) {
			best = ext
		}
	}
	return best
}

// IsMedia reports whether mt (a bare media type) is an image, audio or video
// type the tools accept. SVG is refused: it is XML that may carry script.
func IsMedia(mt string) bool {
	if mt == "image/svg+xml" {
		return false
	}
	return strings.HasPrefix(mt, "image/") || strings.HasPrefix(mt, "audio/") || strings.HasPrefix(mt, "video/")
}

// DetectMIME names the media type of a file from its name and its first
// bytes. A signature the standard sniffer knows wins for images; otherwise
// the extension names the type, and content that sniffs as text is never
// media. It returns "" when the file is not an image, audio or video file.
func DetectMIME(name string, head []byte) string {
	if len(head) > 512 {
		head = head[:512]
	}
	sniffed := bareType(http.DetectContentType(head))
	byExt := extTypes[strings.ToLower(path.Ext(strings.ReplaceAll(name, `\`, "/")))]
	switch {
	case strings.HasPrefix(sniffed, "image/") && IsMedia(sniffed):
		return sniffed
	case strings.HasPrefix(sniffed, "text/") || sniffed == "application/pdf" || sniffed == "application/zip":
		return ""
	case byExt != "":
		return byExt
	case sniffed == "application/ogg":
		return "audio/ogg"
	case IsMedia(sniffed):
		return sniffed
	}
	return ""
}

func bareType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(ct))
	}
	return mt
}
