package restcompat

import (
	"github.com/swaggest/openapi-go/openapi31"

	"github.com/wagraph/wagraph/graph"
)

// messageRoutes: sending, reading and revoking messages.
func messageRoutes() []route {
	return []route{
		sent(route{
			method: "POST", path: "/session/{sessionId}/message/text", id: "sendText", tag: "messages",
			summary:     "Send a text message",
			description: "Sends a text message to a user or a group.",
			handling:    send[sendTextRequest](graph.MutationResolver.SendText),
			maxBody:     textBody,
			bodyExample: `{"number":"491701234567","text":"Hello from wagraph"}`,
		}),
		sent(route{
			method: "POST", path: "/session/{sessionId}/message/image", id: "sendImage", tag: "messages",
			summary:     "Send an image",
			description: "Sends an image with an optional caption. The media is fetched from source (an http(s) URL) or decoded from it (base64).",
			handling:    send[sendImageRequest](graph.MutationResolver.SendImage),
			maxBody:     mediaBody,
			bodyExample: `{"number":"491701234567","source":"https://example.com/files/menu.jpg","caption":"Today's menu"}`,
		}),
		sent(route{
			method: "POST", path: "/session/{sessionId}/message/video", id: "sendVideo", tag: "messages",
			summary:     "Send a video",
			description: "Sends a video, or a looping GIF with gifPlayback. The media is fetched from source (an http(s) URL) or decoded from it (base64).",
			handling:    send[sendVideoRequest](graph.MutationResolver.SendVideo),
			maxBody:     mediaBody,
			bodyExample: `{"number":"491701234567","source":"https://example.com/files/clip.mp4","caption":"Our new shop"}`,
		}),
		sent(route{
			method: "POST", path: "/session/{sessionId}/message/document", id: "sendDocument", tag: "messages",
			summary:     "Send a document",
			description: "Sends a file as a document, under fileName. The media is fetched from source (an http(s) URL) or decoded from it (base64).",
			handling:    send[sendDocumentRequest](graph.MutationResolver.SendDocument),
			maxBody:     mediaBody,
			bodyExample: `{"number":"491701234567","source":"https://example.com/files/invoice-1042.pdf","fileName":"invoice-1042.pdf"}`,
		}),
		sent(route{
			method: "POST", path: "/session/{sessionId}/message/audio", id: "sendAudio", tag: "messages",
			summary:     "Send audio or a voice note",
			description: "With asVoiceNote the audio is sent as a push-to-talk voice note (OGG/Opus with a waveform); other formats are converted with ffmpeg, and refused with 415 naming the missing converter when it is not installed.",
			handling:    send[sendAudioRequest](graph.MutationResolver.SendAudio),
			maxBody:     mediaBody,
			bodyExample: `{"number":"491701234567","source":"https://example.com/files/greeting.ogg","asVoiceNote":true}`,
		}),
		sent(route{
			method: "POST", path: "/session/{sessionId}/message/location", id: "sendLocation", tag: "messages",
			summary:     "Send a location",
			description: "An address or both coordinates (400 otherwise); coordinates win when both are given; an address alone is geocoded (422 when that fails or no geocoder is configured).",
			handling:    send[sendLocationRequest](graph.MutationResolver.SendLocation),
			bodyExamples: []namedExample{
				{"coordinates", "By coordinates", `{"number":"491701234567","latitude":52.520008,"longitude":13.404954,"name":"Berlin TV Tower"}`},
				{"address", "By address (geocoded)", `{"number":"491701234567","address":"Panoramastraße 1A, 10178 Berlin"}`},
			},
		}),
		sent(route{
			method: "POST", path: "/session/{sessionId}/message/contact", id: "sendContact", tag: "messages",
			summary:     "Send a contact card",
			description: "Sends a contact card (vCard) of a phone number.",
			handling:    send[sendContactRequest](graph.MutationResolver.SendContact),
			bodyExample: `{"number":"491701234567","contact":{"phoneNumber":"+49 170 9876543","firstName":"Ada","lastName":"Lovelace"}}`,
		}),
		{
			method: "GET", path: "/session/{sessionId}/message/{messageId}", id: "message", tag: "messages",
			summary:     "Get a stored message",
			description: "Reads the stored record of a message this session sent or received.",
			params:      []param{pSession, pMessage},
			handling:    noBody((*Handler).getMessage),
			status:      200, answer: "The stored record of the message.",
			data:        messageJSON{},
			dataExample: `{"id":"3EB0C431C26A1916E0A1","chat":"491701234567@s.whatsapp.net","sender":"491709876543@s.whatsapp.net","fromMe":true,"type":"text","text":"Hello from wagraph","caption":null,"mediaUrl":null,"status":"DELIVERY_ACK","timestamp":"2026-01-02T03:04:15.000Z","viewOnce":false,"senderPhone":"491709876543","senderLid":"200000000000123@lid","edited":false,"reactions":[{"emoji":"👍","sender":"491701234567@s.whatsapp.net","fromMe":false}]}`,
		},
		{
			method: "GET", path: "/session/{sessionId}/message/{messageId}/media", id: "messageMedia", tag: "messages",
			summary:     "Get the media of a message",
			description: "The decrypted media of a received or sent image, video, audio, voice note, document or sticker, streamed with its content type (the message's mimetype): the kept copy when the server keeps media (--media-store; ETag is its SHA-256), else downloaded from WhatsApp's servers on demand. Range requests are answered 206 with Content-Range (416, the JSON failure envelope, for a range outside the media). Documents carry their file name in Content-Disposition (inline). 404 when the message is unknown to this session, has no media, its media is no longer on WhatsApp's servers, or it is view-once and was viewed (a view-once message's media is served once: its first successful download is the view); 409 when the session is not connected. Failures are the JSON failure envelope.",
			params:      []param{pSession, pMessage},
			handling:    noBody((*Handler).getMessageMedia),
			status:      200, answer: "The media bytes, with Content-Type, Content-Length and, for documents, Content-Disposition.",
			// The bytes themselves, with the headers getMessageMedia sets.
			describe: func(r *openapi31.Response) {
				r.Content["*/*"] = binary("application/octet-stream", "The decrypted media; the actual type is the response's Content-Type.")
				r.WithHeadersItem("Content-Disposition", openapi31.HeaderOrReference{Header: (&openapi31.Header{
					Schema: map[string]any{"type": "string"}}).WithDescription("inline; filename=\"…\" for documents (RFC 2231 filename* for names beyond ASCII).")})
				r.WithHeadersItem("Content-Length", openapi31.HeaderOrReference{Header: (&openapi31.Header{
					Schema: map[string]any{"type": "integer", "minimum": 0}}).WithDescription("The size of the media in bytes.")})
				r.WithHeadersItem("ETag", openapi31.HeaderOrReference{Header: (&openapi31.Header{
					Schema: map[string]any{"type": "string"}}).WithDescription("The quoted hex SHA-256 of the media, when the server keeps it.")})
				r.WithHeadersItem("Accept-Ranges", openapi31.HeaderOrReference{Header: (&openapi31.Header{
					Schema: map[string]any{"type": "string", "const": "bytes"}}).WithDescription("Range requests are answered 206 with the range's bytes.")})
			},
			failures: []int{409, 502, 504},
		},
		{
			method: "DELETE", path: "/session/{sessionId}/message/{messageId}", id: "deleteMessage", tag: "messages",
			summary:     "Delete a message for everyone",
			description: "The chat is found from the server's message store; 404 when the message is unknown to this session, 409 when it was received rather than sent by this session.",
			params:      []param{pSession, pMessage},
			handling:    noBody((*Handler).deleteMessage),
			status:      200, answer: "Revoked for everyone (or, for a delayed send not yet made, cancelled).",
			data:        empty{},
			dataExample: `{}`,
			failures:    []int{409, 422, 502, 504},
		},
		sent(route{
			method: "POST", path: "/session/{sessionId}/message/poll", id: "sendPoll", tag: "messages",
			summary:     "Send a poll",
			description: "Sends a poll. Votes arrive as messages.update events with status voted and the chosen option names, decrypted; GET …/message/{messageId}/poll gives the tally.",
			handling:    send[sendPollRequest](graph.MutationResolver.SendPoll),
			bodyExample: `{"number":"491701234567","question":"Which day?","options":["Monday","Tuesday"],"selectableCount":1}`,
		}),
		sent(route{
			method: "POST", path: "/session/{sessionId}/message/sticker", id: "sendSticker", tag: "messages",
			summary:     "Send a sticker",
			description: "Sends a sticker made from a PNG, JPEG, GIF or WebP image: scaled into 512×512 on a transparent canvas and sent as WebP, animated when the source is (GIF or animated WebP).",
			handling:    send[sendStickerRequest](graph.MutationResolver.SendSticker),
			maxBody:     mediaBody,
			bodyExample: `{"number":"491701234567","source":"https://example.com/cat.png"}`,
		}),
	}
}

// sendNote ends the description of every send.
const sendNote = " Needs a CONNECTED session (409 otherwise). With delay > 0 the message is stored and sent later, even across a restart of the server: the answer then carries scheduledAt instead of timestamp, and the outcome arrives as a messages.update event."

// sent completes a send's entry with what every send shares: the session
// and the Idempotency-Key header in, the send's result out, and the
// failures of reaching WhatsApp.
func sent(rt route) route {
	rt.description += sendNote
	rt.params = []param{pSession, pIdempotencyKey}
	rt.status = 200
	rt.answer = "Sent (timestamp), or stored for a delayed send (scheduledAt); a delayed send's outcome arrives later as a messages.update event."
	rt.data = sendResultJSON{}
	rt.dataExample = `{"messageId":"3EB0C431C26A1916E0A1","timestamp":"2026-01-02T03:04:15.000Z"}`
	rt.failures = []int{409, 422, 502, 504}
	return rt
}
