package webui_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wagraph/wagraph/internal/apptest"
)

// viewport is a browser window the layout tests measure the dashboard in.
type viewport struct {
	name          string
	width, height int64
	phone         bool // a phone's: its meta viewport applies, the page is laid out at width
}

// viewports are the widths the dashboard is checked at: a desktop's and a
// phone's (390 px, a common phone's width in CSS pixels).
var viewports = []viewport{
	{name: "desktop", width: 1280, height: 860},
	{name: "phone", width: 390, height: 844, phone: true},
}

// emulate sizes the tab as v.
func (v viewport) emulate() chromedp.Action {
	if v.phone {
		return chromedp.EmulateViewport(v.width, v.height, chromedp.EmulateScale(1), chromedp.EmulateMobile, chromedp.EmulatePortrait)
	}
	return chromedp.EmulateViewport(v.width, v.height, chromedp.EmulateScale(1))
}

// signIn opens the dashboard and pastes the admin token.
func signIn(t *testing.T, b *browser) {
	t.Helper()
	b.run(t, "signing in",
		chromedp.Navigate(b.origin+"/ui/"),
		chromedp.WaitVisible("#token", chromedp.ByQuery),
		chromedp.SendKeys("#token", apptest.AdminToken, chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery),
		chromedp.WaitVisible("#session-rows", chromedp.ByQuery),
	)
}
