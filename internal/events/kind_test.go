package events

import "testing"

func TestKindEnum(t *testing.T) {
	tests := []struct {
		kind Kind
		want string
	}{
		{"messages.update", "MESSAGES_UPDATE"},
		{"group-participants.update", "GROUP_PARTICIPANTS_UPDATE"},
		{"inbound-message.upsert", "INBOUND_MESSAGE_UPSERT"},
		{"chats.phoneNumberShare", "CHATS_PHONE_NUMBER_SHARE"},
		{"call", "CALL"},
		{WebhookTest, "WEBHOOK_TEST"},
	}
	for _, tt := range tests {
		if got := tt.kind.Enum(); got != tt.want {
			t.Errorf("%q.Enum() = %q, want %q", tt.kind, got, tt.want)
		}
		back, ok := FromEnum(tt.want)
		if !ok || back != tt.kind {
			t.Errorf("FromEnum(%q) = %q, %v; want %q", tt.want, back, ok, tt.kind)
		}
	}
}

func TestSelectable(t *testing.T) {
	if n := len(Selectable()); n != 27 {
		t.Fatalf("%d selectable kinds, the contract has 27", n)
	}
	seen := map[string]bool{}
	for _, k := range Selectable() {
		if seen[k.Enum()] {
			t.Errorf("two kinds share the enum value %s", k.Enum())
		}
		seen[k.Enum()] = true
		if !k.IsSelectable() {
			t.Errorf("%q not selectable", k)
		}
	}
	if WebhookTest.IsSelectable() {
		t.Error("webhook.test must not be selectable")
	}
}
