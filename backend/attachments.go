package backend

import (
	"errors"
	"fmt"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools/media"
)

// saveAttachments validates the attachments with the library's rules
// (media.SaveUploads, NormalizeAttachments' normalization: media types
// only, non-empty, a data URL whose type matches mimeType, at most 4,
// within the size limits), decodes their bytes straight to files under the
// session folder (attachments/<time>-<i>-<name>) and returns them for the
// model (naming their files: the history keeps no copy of their bytes)
// and as refs (for history and events). A refused attachment is an
// invalid-params error naming it.
func saveAttachments(sessionDir string, in []media.Upload) ([]llm.Attachment, []llm.StoredAttachment, error) {
	atts, refs, err := media.SaveUploads(sessionDir, in)
	var ae *media.AttachmentError
	switch {
	case errors.As(err, &ae), errors.Is(err, media.ErrAttachment):
		return nil, nil, attachmentParamError(err)
	case err != nil:
		return nil, nil, fmt.Errorf("save attachments: %w", err)
	}
	return atts, refs, nil
}

// attachmentParamError turns a normalization error into invalid params
// naming the attachment: attachments[i] ("name"): why.
func attachmentParamError(err error) error {
	var ae *media.AttachmentError
	if errors.As(err, &ae) {
		field := fmt.Sprintf("attachments[%d]", ae.Index)
		if ae.Name != "" {
			field += fmt.Sprintf(" (%q)", ae.Name)
		}
		return protocol.InvalidField(field, ae.Err.Error())
	}
	return protocol.InvalidField("attachments", err.Error())
}
