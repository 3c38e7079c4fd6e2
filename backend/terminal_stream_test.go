package backend

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/terminal"
)

func TestTermFrameBytesBoundsTheQueue(t *testing.T) {
	require.Equal(t, 256<<10, termFrameBytes(16<<20))
	require.Equal(t, 4<<10, termFrameBytes(1))
	for _, q := range []int{1 << 10, 64 << 10, 1 << 20, 16 << 20, 1 << 30} {
		// a frame (base64: 4/3 of the chunk) is at most an eighth of the queue
		require.LessOrEqual(t, termFrameBytes(q)*4/3, max(q/8, (4<<10)*4/3))
	}
}

// FuzzTerminalOutputFrame: the hand-built frame is exactly what
// encoding/json makes of the notification, for any id, seq and bytes.
func FuzzTerminalOutputFrame(f *testing.F) {
	f.Add("term_0123456789ab", int64(0), []byte("hello\r\n"))
	f.Add("<&\"\\é\x00", int64(1<<40), []byte{0, 0xff, 0x1b, '['})
	f.Add("", int64(-1), []byte{})
	f.Fuzz(func(t *testing.T, id string, seq int64, data []byte) {
		got := newEnvelope(wsrpc.NotificationEnvelope, "terminal.output").frame(0, func(b []byte) []byte { return appendTerminalOutputParams(b, AppendJSONString(nil, id), seq, data) })
		want, err := wsrpc.EncodeNotification("terminal.output", terminal.Output{TerminalID: id, Seq: seq, Data: data})
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	})
}

// FuzzTerminalWriteParams: any params decode to an error or to the bytes
// given, never a panic; exactly one of data and dataBase64 is accepted.
func FuzzTerminalWriteParams(f *testing.F) {
	f.Add([]byte(`{"projectId":"p","terminalId":"t","data":"ls\r"}`))
	f.Add([]byte(`{"projectId":"p","terminalId":"t","dataBase64":"AAEC/w=="}`))
	f.Add([]byte(`{"projectId":"p","terminalId":"t","data":"a","dataBase64":"YQ=="}`))
	f.Add([]byte(`{"projectId":"p","terminalId":"t","dataBase64":"%%"}`))
	f.Add([]byte(`{"projectId":"p","terminalId":"t"}`))
	f.Add([]byte(`[1]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var p protocol.TerminalWriteParams
		if err := protocol.DecodeParams(raw, &p); err != nil {
			require.ErrorIs(t, err, protocol.ErrInvalidParams)
			return
		}
		b, err := TerminalWriteParams(p).writeBytes()
		if err != nil {
			require.ErrorIs(t, err, protocol.ErrInvalidParams)
			return
		}
		require.False(t, p.Data != nil && p.DataBase64 != nil)
		if p.Data != nil {
			require.Equal(t, *p.Data, string(b))
		} else {
			require.NotNil(t, p.DataBase64)
			quoted, err := json.Marshal(*p.DataBase64)
			require.NoError(t, err)
			var again []byte
			require.NoError(t, json.Unmarshal(quoted, &again), "what decoded is base64 that encoding/json accepts")
			require.Equal(t, again, b)
		}
	})
}
