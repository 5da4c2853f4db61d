package e2e

import (
	"net/http"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestNonAdminDemoteFails (issue 34): a session whose account is a plain
// member of a group demotes an admin; WhatsApp refuses per participant.
func TestNonAdminDemoteFails(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const host, other = "4915550034001", "4915550034002"
	g, err := n.CreateGroup(host, "Not mine", apptest.LinkedPhone, other)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.SetRole(g, other, "admin"); err != nil {
		t.Fatal(err)
	}
	res := s.REST(t, "POST", "/session/"+sess.ID+"/group/"+g.String()+"/demote", apptest.AdminToken, `["`+other+`"]`)
	if res.Status != http.StatusOK {
		t.Fatalf("demote: %d %s", res.Status, res.Body)
	}
	var out struct {
		Status map[string]struct {
			Status  string
			Code    int
			Message string
		}
	}
	res.JSON(t, &out)
	t.Logf("%s", res.Body)
	if f := out.Status[other]; f.Status != "failed" {
		t.Errorf("a non-admin's demote answered %s", res.Body)
	}
	if r := roles(groupView(t, s, g.String())); r[other] != "admin" {
		t.Errorf("roles after a non-admin's demote: %v", r)
	}
}
