package xredis

import "strings"

// Redis Cluster hash slots: CRC16 (XMODEM) of the key, or of its hash tag
// (the part between the first "{" and the next "}", when not empty),
// modulo 16384.

const numSlots = 16384

var crc16Table = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()

func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^s[i]]
	}
	return crc
}

// slot returns the hash slot of key.
func slot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return crc16(key) % numSlots
}

// slotGroups splits the positions 0..len(keys)-1 into groups whose keys
// share a hash slot (one group for all when !cluster), in the order each
// group's first key comes. A key given twice goes to a later group, so
// that no command names a key twice: a RESP3 reply keyed by stream could
// not tell the two apart.
func slotGroups(keys []string, cluster bool) [][]int {
	if len(keys) == 1 {
		return oneGroup
	}
	var groups [][]int
	var slots []uint16
	for i, k := range keys {
		s := uint16(0)
		if cluster {
			s = slot(k)
		}
		placed := false
		for g := range groups {
			if slots[g] != s || hasKey(keys, groups[g], k) {
				continue
			}
			groups[g] = append(groups[g], i)
			placed = true
			break
		}
		if !placed {
			groups = append(groups, []int{i})
			slots = append(slots, s)
		}
	}
	return groups
}

// oneGroup is the groups of one key; read only.
var oneGroup = [][]int{{0}}

func hasKey(keys []string, group []int, k string) bool {
	for _, i := range group {
		if keys[i] == k {
			return true
		}
	}
	return false
}
