package wafake_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/testclient"
)

// TestTrustedContactToken: after a direct message whatsmeow issues the
// recipient a trusted-contact token (tctoken.go); the network hands it to
// the recipient's linked devices, which keep it under the issuer's LID.
func TestTrustedContactToken(t *testing.T) {
	t.Parallel()
	const alice, bob = "491701110021", "491701110022"
	n := startNetwork(t)
	cliA, _ := linkSettled(t, n, alice)
	cliB, _ := linkSettled(t, n, bob)
	ctx := context.Background()
	if _, err := cliA.SendMessage(ctx, types.NewJID(bob, types.DefaultUserServer), &waE2E.Message{Conversation: proto.String("hi")}); err != nil {
		t.Fatal(err)
	}
	testclient.Until(t, 10*time.Second, `slices.Equal(n.TrustedContacts(alice), []string{bob})`, func() bool { return slices.Equal(n.TrustedContacts(alice), []string{bob}) })
	acctA, _ := n.Account(alice)
	testclient.Until(t, 10*time.Second, "the privacy token stored", func() bool {
		tok, err := cliB.Store.PrivacyTokens.GetPrivacyToken(ctx, acctA.LID)
		return err == nil && tok != nil && len(tok.Token) > 0
	})
	if got := n.TrustedContacts(bob); len(got) != 0 {
		t.Errorf("bob issued tokens to %v without writing to anyone", got)
	}
}
