package payload

// GroupMember is a member of a group and its role.
type GroupMember struct {
	JID   string `json:"jid"`
	Phone Text   `json:"phone"`
	LID   Text   `json:"lid"`
	Role  string `json:"role"` // member, admin, superadmin
}

// Group is a group the account is in: the data of groups.upsert, when the
// account joined it (created, added, by invite link) or, after a session's
// first connection, for every group it was in already.
type Group struct {
	ID               string        `json:"id"`
	Subject          string        `json:"subject"`
	Topic            Text          `json:"topic"`
	Owner            Text          `json:"owner"` // the creator, when WhatsApp said
	Created          Time          `json:"created"`
	Announce         bool          `json:"announce"`         // only admins send
	Locked           bool          `json:"locked"`           // only admins edit the group's info
	ApprovalRequired bool          `json:"approvalRequired"` // admins approve who joins
	EphemeralSeconds uint32        `json:"ephemeralSeconds"` // disappearing-messages timer; 0 is off
	Participants     []GroupMember `json:"participants"`
	// Reason is why the account is in it: created (the group was created
	// with the account in it, by the account when author is null), added
	// (by an admin), invite (joined by link), approval (a request to join
	// approved), or listed (the groups listed after pairing). Author is who
	// put the account in it, when WhatsApp said and it was not the account.
	Reason Text `json:"reason"`
	Author Text `json:"author"`
}

// GroupUpdate is the data of groups.update: what changed about a group's
// settings. Only what changed is set; the rest is null.
type GroupUpdate struct {
	ID          string `json:"id"`
	Author      Text   `json:"author"` // who changed it, when WhatsApp said
	AuthorPhone Text   `json:"authorPhone"`
	Subject     Text   `json:"subject"`
	// Topic is the new description; "" when it was removed.
	Topic            *string `json:"topic"`
	Announce         *bool   `json:"announce"`
	Locked           *bool   `json:"locked"`
	EphemeralSeconds *uint32 `json:"ephemeralSeconds"`
	InviteLink       Text    `json:"inviteLink"` // the new invite link after a reset
	ApprovalRequired *bool   `json:"approvalRequired"`
	// MemberAddMode is who may add members now: ADMINS or ALL.
	MemberAddMode Text     `json:"memberAddMode"`
	Deleted       *bool    `json:"deleted"`
	DeleteReason  Text     `json:"deleteReason"`
	Picture       *Picture `json:"picture"`
	Timestamp     Time     `json:"timestamp"`
}

// GroupParticipants is the data of group-participants.update: members
// added, removed, promoted or demoted.
type GroupParticipants struct {
	ID           string   `json:"id"`     // the group's JID
	Action       string   `json:"action"` // add, remove, promote, demote
	Participants []Person `json:"participants"`
	Author       Text     `json:"author"` // who did it, when WhatsApp said
	AuthorPhone  Text     `json:"authorPhone"`
	// Reason is why members were added: "invite" when they joined by link.
	Reason    Text `json:"reason"`
	Timestamp Time `json:"timestamp"`
}

// GroupJoinRequest is the data of group.join-request: a request to join a
// group whose admins approve new members, one event per requester.
type GroupJoinRequest struct {
	ID string `json:"id"` // the group's JID
	// Action: requested (the account asked to join), created (a user
	// asked: admins see this), revoked (the requester withdrew), rejected
	// (an admin declined).
	Action           string `json:"action"`
	Participant      string `json:"participant"`
	ParticipantPhone Text   `json:"participantPhone"`
	ParticipantLID   Text   `json:"participantLid"`
	Author           Text   `json:"author"`
	Method           Text   `json:"method"` // how the request was made (invite_link, …), when WhatsApp said
	Timestamp        Time   `json:"timestamp"`
}

func (*Group) isData()             {}
func (*GroupUpdate) isData()       {}
func (*GroupParticipants) isData() {}
func (*GroupJoinRequest) isData()  {}
