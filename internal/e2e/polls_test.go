package e2e

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/testclient"
)

type pollTally struct {
	MessageID       string
	Question        string
	SelectableCount int
	Options         []struct {
		Name   string
		Votes  int
		Voters []struct{ Phone *string }
	}
}

func tally(t *testing.T, s *apptest.Server, sessionID, id string) *pollTally {
	t.Helper()
	var out struct{ Poll *pollTally }
	s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $m: ID!) { poll(sessionId: $s, messageId: $m) {
		messageId question selectableCount options { name votes voters { phone } } } }`, map[string]any{"s": sessionID, "m": id}, &out)
	return out.Poll
}

func votesOf(p *pollTally) map[string]int {
	out := map[string]int{}
	for _, o := range p.Options {
		out[o.Name] = o.Votes
	}
	return out
}

// TestSendPoll: a poll sent over REST reaches the contacts' phones as a
// poll with its question and options; their votes, encrypted under the
// poll's secret as phones vote, arrive as messages.update (voted) with the
// option names decrypted, and the stored tally counts each voter's latest
// vote, across a restart of the server too. A vote for an option the poll
// does not have, or for more options than it allows, is not counted. Bad
// polls are refused naming the field.
func TestSendPoll(t *testing.T) {
	t.Parallel()
	n, control := apptest.RemoteNetwork(t)
	cfg := apptest.SandboxConfig(t)
	cfg.SandboxNetwork = control
	s := apptest.StartLive(t, cfg)
	const phone, ana, ben = "4915550270001", "4915550270002", "4915550270003"
	sess := s.LinkSession(t, phone)
	for _, c := range []string{ana, ben} {
		if _, err := n.SendText(c, phone, "hallo"); err != nil {
			t.Fatal(err)
		}
	}

	r := s.REST(t, "POST", "/session/"+sess.ID+"/message/poll", apptest.AdminToken,
		`{"number":"`+ana+`","question":"Welche Farbe?","options":["Rot","Grün","Blau"],"selectableCount":2}`)
	if r.Status != http.StatusOK {
		t.Fatalf("POST message/poll: %d %s", r.Status, r.Body)
	}
	var sent struct{ Data struct{ MessageID string } }
	r.JSON(t, &sent)
	pollID := sent.Data.MessageID
	got := received(t, s, ana, pollID)
	if got.Type != "poll" || got.Poll == nil || got.Poll.Question != "Welche Farbe?" ||
		!slices.Equal(got.Poll.Options, []string{"Rot", "Grün", "Blau"}) || got.Poll.SelectableCount != 2 {
		t.Fatalf("the phone decrypted %+v (poll %+v), want the poll with its three options and 2 choices", got, got.Poll)
	}

	vote := func(from string, options ...string) {
		t.Helper()
		s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!, $p: ID!, $o: [String!]!) { sandboxVote(sessionId: $s, from: $f, pollId: $p, options: $o) }`,
			map[string]any{"s": sess.ID, "f": from, "p": pollID, "o": options}, nil)
	}
	vote(ana, "Rot", "Blau")
	testclient.Until(t, 10*time.Second, "the vote counted", func() bool {
		v := votesOf(tally(t, s, sess.ID, pollID))
		return v["Rot"] == 1 && v["Blau"] == 1 && v["Grün"] == 0
	})
	// The tally is stored before the event is: wait for the event too.
	var voted map[string]any
	testclient.Until(t, 10*time.Second, "messages.update (voted) for the vote", func() bool {
		for _, d := range eventData(t, s, sess.ID, "MESSAGES_UPDATE") {
			if d["status"] == "voted" && d["id"] == pollID {
				voted = d
			}
		}
		return voted != nil
	})
	v, _ := voted["vote"].(map[string]any)
	if names, _ := v["selectedOptions"].([]any); len(names) != 2 || names[0] != "Rot" || names[1] != "Blau" || v["voterPhone"] != ana {
		t.Errorf("the vote event says %v, want Rot and Blau by %s", v, ana)
	}

	// Ana changes her mind; a vote for an unknown option and one for too
	// many options are not counted.
	vote(ana, "Grün")
	vote(ana, "Gelb")
	vote(ana, "Rot", "Grün", "Blau")
	testclient.Until(t, 10*time.Second, "Ana's new vote replacing her first", func() bool {
		v := votesOf(tally(t, s, sess.ID, pollID))
		return v["Grün"] == 1 && v["Rot"] == 0 && v["Blau"] == 0
	})
	refused := 0
	testclient.Until(t, 10*time.Second, "the two votes that do not fit, each with its reason", func() bool {
		refused = 0
		for _, d := range eventData(t, s, sess.ID, "MESSAGES_UPDATE") {
			if d["status"] == "voted" && d["id"] == pollID && strings.Contains(str2(d["error"]), "not counted") {
				refused++
			}
		}
		return refused == 2
	})

	// After a restart, the option names come from the store.
	apptest.Settle(t, n, sess)
	s.Stop(t)
	s = apptest.StartLive(t, cfg)
	s.WaitStatus(t, sess.ID, "CONNECTED", nil)
	poll2 := restSend(t, s, sess.ID, "poll", map[string]any{"number": ben, "question": "Ja?", "options": []string{"Ja", "Nein"}})
	received(t, s, ben, poll2)
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!, $p: ID!, $o: [String!]!) { sandboxVote(sessionId: $s, from: $f, pollId: $p, options: $o) }`,
		map[string]any{"s": sess.ID, "f": ana, "p": pollID, "o": []string{"Blau"}}, nil)
	testclient.Until(t, 10*time.Second, "a vote after the restart counted by name", func() bool {
		v := votesOf(tally(t, s, sess.ID, pollID))
		return v["Blau"] == 1 && v["Grün"] == 0
	})
	p := tally(t, s, sess.ID, pollID)
	if p.Question != "Welche Farbe?" || p.SelectableCount != 2 || len(p.Options) != 3 {
		t.Errorf("the tally %+v, want the question, 2 choices and 3 options", p)
	}
	r = s.REST(t, "GET", "/session/"+sess.ID+"/message/"+pollID+"/poll", apptest.AdminToken, "")
	var rest struct {
		Data struct {
			Question string
			Options  []struct {
				Name   string
				Votes  int
				Voters []struct{ Phone string }
			}
		}
	}
	r.JSON(t, &rest)
	if r.Status != http.StatusOK || rest.Data.Question != "Welche Farbe?" || rest.Data.Options[2].Votes != 1 || rest.Data.Options[2].Voters[0].Phone != ana {
		t.Errorf("GET …/poll: %d %s", r.Status, r.Body)
	}
	if r := s.REST(t, "GET", "/session/"+sess.ID+"/message/"+poll2+"x/poll", apptest.AdminToken, ""); r.Status != http.StatusNotFound {
		t.Errorf("GET the poll of an unknown message: %d, want 404", r.Status)
	}

	for _, tt := range []struct{ body, field string }{
		{`{"number":"` + ana + `","question":"","options":["a","b"]}`, "question"},
		{`{"number":"` + ana + `","question":"q","options":["a"]}`, "options"},
		{`{"number":"` + ana + `","question":"q","options":["a","b","c","d","e","f","g","h","i","j","k","l","m"]}`, "options"},
		{`{"number":"` + ana + `","question":"q","options":["a","a"]}`, "options[1]"},
		{`{"number":"` + ana + `","question":"q","options":["a",""]}`, "options[1]"},
		{`{"number":"` + ana + `","question":"q","options":["a","b"],"selectableCount":3}`, "selectableCount"},
	} {
		r := s.REST(t, "POST", "/session/"+sess.ID+"/message/poll", apptest.AdminToken, tt.body)
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Message(t), tt.field) {
			t.Errorf("poll %s: %d %q, want 400 naming %s", tt.body, r.Status, r.Message(t), tt.field)
		}
	}
}

func str2(v any) string {
	s, _ := v.(string)
	return s
}
