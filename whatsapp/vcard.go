package whatsapp

import (
	"strings"
)

// VCard returns the vCard 3.0 of a contact message for the number phone
// (digits, international format). The waid parameter of TEL is what
// WhatsApp's apps look for: with it the card offers "Message" for the
// number instead of only "Add contact".
func VCard(phone, firstName, lastName string) string {
	phone = strings.TrimPrefix(strings.TrimSpace(phone), "+")
	firstName, lastName = strings.TrimSpace(firstName), strings.TrimSpace(lastName)
	full := strings.TrimSpace(firstName + " " + lastName)
	if full == "" {
		full = "+" + phone
	}
	lines := []string{
		"BEGIN:VCARD",
		"VERSION:3.0",
		"N:" + vcardText(lastName) + ";" + vcardText(firstName) + ";;;",
		"FN:" + vcardText(full),
		"TEL;type=CELL;type=VOICE;waid=" + phone + ":+" + phone,
		"END:VCARD",
	}
	// WhatsApp's apps write and expect LF line ends, not RFC 2426's CRLF.
	return strings.Join(lines, "\n")
}

// vcardText escapes a text value (RFC 2426 5.4): backslash, comma,
// semicolon and line breaks.
func vcardText(s string) string {
	return strings.NewReplacer(`\`, `\\`, ",", `\,`, ";", `\;`, "\r\n", `\n`, "\n", `\n`, "\r", `\n`).Replace(s)
}
