package sandbox

import (
	"context"
	"log/slog"
	"unicode/utf8"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// SetProfile sets what others read of the account of Phone (userInfo,
// profilePicture): its about text, its picture and whether it is a
// business. Absent fields keep their value. Picture is a JPEG (the GraphQL
// control converts the source it is given); empty removes the picture. A
// business is named by the account's push name ("Business <phone>" when it
// has none), the verified name its messages and user queries then carry.
type SetProfile struct {
	Phone    string  `json:"phone"`
	About    *string `json:"about,omitempty"`
	Picture  *[]byte `json:"picture,omitempty"`
	Business *bool   `json:"business,omitempty"`
}

func (SetProfile) control() Control[SetProfile, Done] {
	return Control[SetProfile, Done]{
		name: "set-profile",
		check: func(q SetProfile) error {
			if err := checkAccount("phone", q.Phone); err != nil {
				return err
			}
			if q.About != nil && utf8.RuneCountInString(*q.About) > wafake.MaxAbout {
				return fault.InvalidField("about", "about must be at most %d characters (got %d)", wafake.MaxAbout, utf8.RuneCountInString(*q.About))
			}
			if q.Picture != nil && len(*q.Picture) > 0 && !isJPEG(*q.Picture) {
				return fault.InvalidField("picture", "picture must be a JPEG image")
			}
			return nil
		},
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q SetProfile) (Done, error) {
			if q.About != nil {
				if err := n.SetAbout(q.Phone, *q.About); err != nil {
					return Done{}, refusal(err, q.Phone)
				}
			}
			if q.Picture != nil {
				var jpeg []byte
				if len(*q.Picture) > 0 {
					jpeg = *q.Picture
				}
				if _, err := n.SetPicture(q.Phone, jpeg); err != nil {
					return Done{}, refusal(err, q.Phone)
				}
			}
			if q.Business != nil {
				name := ""
				if *q.Business {
					name = "Business " + q.Phone
					if a, ok := n.Account(q.Phone); ok && a.PushName != "" {
						name = a.PushName
					}
				}
				if err := n.SetBusinessName(q.Phone, name); err != nil {
					return Done{}, refusal(err, q.Phone)
				}
			}
			return Done{}, nil
		},
	}
}

func isJPEG(b []byte) bool { return len(b) >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF }
