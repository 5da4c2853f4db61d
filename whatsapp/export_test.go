package whatsapp

import (
	"fmt"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Built is what the adapter made of an Outgoing, read back as a received
// message is read.
type Built struct {
	Message                            *waE2E.Message
	Type, Text, Caption, Name, Address string
	VCard, QuotedID                    string
	Mentions, PollOptions              []string
	PollSelectable                     int
	Forwarded                          bool
}

// BuildOffline builds out with its builder as Send does, with a made-up
// upload in place of the media host's (kinds_test.go: every kind of
// internal/messaging's table is built without a network).
func BuildOffline(out Outgoing) (Built, error) {
	b, ok := builders()[out.Type]
	if !ok {
		return Built{}, fmt.Errorf("no builder of type %q", out.Type)
	}
	up := whatsmeow.UploadResponse{URL: "https://mmg.example/x", DirectPath: "/v/x", MediaKey: []byte("key"),
		FileEncSHA256: []byte("enc"), FileSHA256: []byte("sha"), FileLength: 4}
	msg, err := b.build(nil, out, up, contextInfo(out))
	if err != nil {
		return Built{}, err
	}
	read := msg
	if inner := msg.GetViewOnceMessageV2().GetMessage(); inner != nil {
		read = inner
	}
	c := contentOf(read)
	return Built{Message: msg, Type: c.typ, Text: c.text, Caption: c.caption, Name: c.name, Address: c.address,
		VCard: c.vcard, QuotedID: c.quotedID, Mentions: c.mentions, PollOptions: c.pollOptions, PollSelectable: c.pollSelectable,
		Forwarded: forwarded(read)}, nil
}

// forwarded reports whether the content of msg carries the forwarded mark.
func forwarded(msg *waE2E.Message) bool {
	found := false
	msg.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() == nil {
			return true
		}
		inner := v.Message()
		if f := inner.Descriptor().Fields().ByName("contextInfo"); f != nil && inner.Has(f) {
			ci, _ := inner.Get(f).Message().Interface().(*waE2E.ContextInfo)
			found = found || ci.GetIsForwarded()
		}
		return true
	})
	return found
}
