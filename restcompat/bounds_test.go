package restcompat_test

import (
	"testing"

	"github.com/wagraph/wagraph/internal/lookup"
	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/whatsapp"
)

// TestBoundsAreTheDomains: the bounds the document shows, and the strict
// walk enforces while decoding (maxItems), are the domain's rules, which
// GraphQL meets in the domain itself.
func TestBoundsAreTheDomains(t *testing.T) {
	doc := loadOpenAPI(t)
	for _, tt := range []struct {
		at   string
		want int
	}{
		{"#/components/schemas/MarkReadRequest/properties/messageIds/maxItems", messaging.MaxReadIDs},
		{"#/components/schemas/MessageID/maxLength", messaging.MaxMessageIDLen},
		{"#/components/schemas/Mentions/maxItems", messaging.MaxMentions},
		{"#/components/schemas/User/maxLength", whatsapp.MaxRecipientLen},
		{"#/components/schemas/Recipient/maxLength", whatsapp.MaxRecipientLen},
		{"#/components/schemas/PhoneNumber/maxLength", whatsapp.MaxRecipientLen},
		{"#/components/schemas/CheckNumbersRequest/properties/numbers/maxItems", lookup.MaxBatch},
		{"#/components/schemas/IdentitiesRequest/properties/ids/maxItems", lookup.MaxBatch},
	} {
		got, err := pointer(doc, tt.at)
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := got.(float64); !ok || int(n) != tt.want {
			t.Errorf("%s = %v; the domain's bound is %d", tt.at, got, tt.want)
		}
	}
}
