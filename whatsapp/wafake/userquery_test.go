package wafake_test

import (
	"context"
	"testing"

	"go.mau.fi/whatsmeow/types"
)

// TestUserQueries: whatsmeow's IsOnWhatsApp and GetUserInfo get what
// WhatsApp's usync answers: whether a number is on WhatsApp, with its LID
// and, for a business, its verified name; a user's about text, picture id
// (hidden by its picture privacy, as the picture is), devices and LID, asked
// by number or by LID. whatsmeow keeps the verified name of a user info
// answer in the contact store (UserInfo.VerifiedName stays nil).
func TestUserQueries(t *testing.T) {
	t.Parallel()
	const phone, shop, private, absent = "491702230001", "491702230002", "491702230003", "491702230000"
	n := startNetwork(t)
	cli, _ := linkSettled(t, n, phone)
	ctx := context.Background()
	if err := n.SetAbout(shop, "Open 9-17"); err != nil {
		t.Fatal(err)
	}
	if err := n.SetBusinessName(shop, "Erika's Shop"); err != nil {
		t.Fatal(err)
	}
	shopPic, err := n.SetPicture(shop, fakeJPEG(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.SetPicture(private, fakeJPEG(t)); err != nil {
		t.Fatal(err)
	}
	if err := n.SetPrivacy(private, types.PrivacySettingTypeProfile, types.PrivacySettingNone); err != nil {
		t.Fatal(err)
	}
	shopAcct, _ := n.Account(shop)

	checks, err := cli.IsOnWhatsApp(ctx, []string{"+" + shop, "+" + private, "+" + absent})
	if err != nil || len(checks) != 3 {
		t.Fatalf("IsOnWhatsApp: %+v, %v", checks, err)
	}
	for _, c := range checks {
		switch c.Query {
		case "+" + shop:
			if !c.IsIn || c.JID != shopAcct.LID || c.PhoneNumber.User != shop || c.VerifiedName == nil || c.VerifiedName.Details.GetVerifiedName() != "Erika's Shop" {
				t.Errorf("the shop: %+v", c)
			}
		case "+" + private:
			if !c.IsIn || c.VerifiedName != nil {
				t.Errorf("a plain account: %+v", c)
			}
		case "+" + absent:
			if c.IsIn {
				t.Errorf("a number not on WhatsApp: %+v", c)
			}
		default:
			t.Errorf("an answer to %q, never asked", c.Query)
		}
	}

	shopJID, privateJID := types.NewJID(shop, types.DefaultUserServer), types.NewJID(private, types.DefaultUserServer)
	infos, err := cli.GetUserInfo(ctx, []types.JID{shopJID, privateJID, shopAcct.LID})
	if err != nil {
		t.Fatal(err)
	}
	for _, asked := range []types.JID{shopJID, shopAcct.LID} {
		info := infos[asked]
		if info.Status != "Open 9-17" || info.PictureID != shopPic || info.LID != shopAcct.LID || len(info.Devices) != 1 {
			t.Errorf("user info of the shop asked as %s: %+v", asked, info)
		}
	}
	if c, err := cli.Store.Contacts.GetContact(ctx, shopJID); err != nil || c.BusinessName != "Erika's Shop" {
		t.Errorf("the shop's business name in the contact store: %+v (%v)", c, err)
	}
	if info := infos[privateJID]; info.PictureID != "" || len(info.Devices) != 1 {
		t.Errorf("user info of an account hiding its picture: %+v", info)
	}
}
