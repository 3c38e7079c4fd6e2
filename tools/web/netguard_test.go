package web

import (
	"errors"
	"net/netip"
	"testing"
)

func TestBlocked(t *testing.T) {
	cases := []struct {
		addr    string
		blocked bool
	}{
		{"127.0.0.1", true},
		{"127.8.9.10", true},
		{"10.1.2.3", true},
		{"172.16.0.1", true},
		{"172.32.0.1", false},
		{"192.168.1.1", true},
		{"169.254.169.254", true}, // cloud metadata
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"100.64.0.1", true}, // CGNAT
		{"100.127.255.255", true},
		{"100.128.0.1", false},
		{"224.0.0.1", true},
		{"255.255.255.255", true},
		{"8.8.8.8", false},
		{"93.184.215.14", false},
		{"::1", true},
		{"::", true},
		{"fe80::1", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:8.8.8.8", false},
		{"64:ff9b::7f00:1", true},   // NAT64 of 127.0.0.1
		{"64:ff9b::808:808", false}, // NAT64 of 8.8.8.8
		{"2002:7f00:1::", true},     // 6to4 of 127.0.0.1
		{"2002:a00:1::", true},      // 6to4 of 10.0.0.1
		{"2606:4700::1111", false},
		{"fe80::1%eth0", true},
	}
	for _, c := range cases {
		a := netip.MustParseAddr(c.addr)
		if got := Blocked(a); got != c.blocked {
			t.Errorf("Blocked(%s) = %v, want %v", c.addr, got, c.blocked)
		}
	}
	if !Blocked(netip.Addr{}) {
		t.Error("the zero Addr must be blocked")
	}
}

func TestDialControl(t *testing.T) {
	for addr, blocked := range map[string]bool{
		"127.0.0.1:80":          true,
		"[::1]:443":             true,
		"10.0.0.5:8080":         true,
		"93.184.215.14:80":      false,
		"[2606:4700::1111]:443": false,
		"not-an-address":        true,
	} {
		err := dialControl("tcp", addr, nil)
		if got := errors.Is(err, ErrBlockedAddress); got != blocked {
			t.Errorf("dialControl(%s) = %v, want blocked=%v", addr, err, blocked)
		}
	}
}
