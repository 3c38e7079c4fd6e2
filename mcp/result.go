package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
)

// convertResult turns a server's call result into what the model takes:
// the text parts joined, images as attachments (data URLs) with a line
// naming them, embedded text resources as text, other media as a short
// note. A result flagged isError becomes an error of type "mcp_error".
func convertResult(toolName string, r *mcp.CallToolResult) (any, error) {
	if r == nil {
		return "", nil
	}
	var parts []string
	var atts []llm.Attachment
	addImage := func(mime, data string) {
		n := len(atts) + 1
		name := fmt.Sprintf("%s-%d%s", toolName, n, extFor(mime))
		atts = append(atts, llm.Attachment{Name: name, MimeType: mime, DataURL: "data:" + mime + ";base64," + data})
		parts = append(parts, fmt.Sprintf("[image %d: %s, %s, attached]", n, name, mime))
	}
	for _, c := range r.Content {
		switch c := deref(c).(type) {
		case mcp.TextContent:
			parts = append(parts, c.Text)
		case mcp.ImageContent:
			addImage(c.MIMEType, c.Data)
		case mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, base64.StdEncoding.DecodedLen(len(c.Data))))
		case mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
		case mcp.EmbeddedResource:
			switch rc := c.Resource.(type) {
			case mcp.TextResourceContents:
				parts = append(parts, resourceText(rc.URI, rc.Text))
			case *mcp.TextResourceContents:
				parts = append(parts, resourceText(rc.URI, rc.Text))
			case mcp.BlobResourceContents:
				parts = append(parts, blobText(rc, addImage))
			case *mcp.BlobResourceContents:
				parts = append(parts, blobText(*rc, addImage))
			}
		default:
			if b, err := json.Marshal(c); err == nil {
				parts = append(parts, string(b))
			}
		}
	}
	if len(parts) == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n")
	if r.IsError {
		if text == "" {
			text = "the tool failed without a message"
		}
		return nil, &tools.ToolError{Type: "mcp_error", Err: fmt.Errorf("%w: %s", ErrToolFailed, text)}
	}
	if len(atts) > 0 {
		return tools.Result{Output: text, Attachments: atts}, nil
	}
	return text, nil
}

func deref(c mcp.Content) any {
	switch p := c.(type) {
	case *mcp.TextContent:
		return *p
	case *mcp.ImageContent:
		return *p
	case *mcp.AudioContent:
		return *p
	case *mcp.ResourceLink:
		return *p
	case *mcp.EmbeddedResource:
		return *p
	}
	return c
}

func resourceText(uri, text string) string {
	return fmt.Sprintf("[resource %s]\n%s", uri, text)
}

func blobText(rc mcp.BlobResourceContents, addImage func(mime, data string)) string {
	if strings.HasPrefix(rc.MIMEType, "image/") {
		addImage(rc.MIMEType, rc.Blob)
		return fmt.Sprintf("[resource %s]", rc.URI)
	}
	return fmt.Sprintf("[resource %s: %s, %d bytes of binary data, not shown]", rc.URI, rc.MIMEType, base64.StdEncoding.DecodedLen(len(rc.Blob)))
}

func extFor(mime string) string {
	switch mime {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	}
	return ""
}
