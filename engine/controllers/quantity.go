package controllers

import (
	"strconv"
	"strings"
)

// quantity is a resource.Quantity as apimachinery's ParseQuantity builds
// it, for the pod-template-hash: an int64 amount scaled by a power of ten
// (the fast path), with the string it was parsed from when that string is
// canonical, or (dec) a decimal that needed inf.Dec, held here in an int64
// and a scale when it fits. Its String is the canonical form
// kube-apiserver stores.
type quantity struct {
	value  int64
	scale  int32
	format string // DecimalExponent, DecimalSI or BinarySI
	cached string
	dec    bool
}

var decimalSuffixes = map[string]int32{"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
var binarySuffixes = map[string]int32{"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

const maxInt64Factors = 18

// parseQuantity is ParseQuantity; ok is false for a malformed quantity
// or a decimal too large for an int64 amount.
func parseQuantity(str string) (quantity, bool) {
	if str == "" {
		return quantity{}, false
	}
	if str == "0" {
		return quantity{format: "DecimalSI", cached: str}, true
	}
	positive, num, denom, suf, ok := splitQuantity(str)
	if !ok {
		return quantity{}, false
	}
	var base, exponent int32
	format := "DecimalSI"
	if e, isDec := decimalSuffixes[suf]; isDec {
		base, exponent = 10, e
	} else if e, isBin := binarySuffixes[suf]; isBin {
		base, exponent, format = 2, e, "BinarySI"
	} else if len(suf) > 1 && (suf[0] == 'e' || suf[0] == 'E') {
		e, err := strconv.ParseInt(suf[1:], 10, 64)
		if err != nil {
			return quantity{}, false
		}
		base, exponent, format = 10, int32(e), "DecimalExponent"
	} else {
		return quantity{}, false
	}

	precision, scale, mantissa := int32(0), int32(0), int64(1)
	if base == 10 {
		scale = exponent
		precision = maxInt64Factors - int32(len(num)+len(denom))
	} else if exponent >= 0 && len(denom) == 0 {
		mantissa <<= uint(exponent)
		precision = 15 - int32(len(num)) - int32(float32(exponent)*3/10) - 1
	} else {
		precision = -1
	}
	if precision >= 0 {
		scale -= int32(len(denom))
		if scale >= -9 {
			shifted := num + denom
			value, err := strconv.ParseInt(shifted, 10, 64)
			if err != nil {
				return quantity{}, false
			}
			if result, ok := mul64(value, mantissa); ok {
				if !positive {
					result = -result
				}
				q := quantity{value: result, scale: scale, format: format}
				if base == 2 {
					if exponent%10 == 0 && value&0x07 != 0 {
						q.cached = str
					}
				} else if scale%3 == 0 && !strings.HasSuffix(shifted, "000") && shifted[0] != '0' {
					q.cached = str
				}
				return q, true
			}
		}
	}

	// The inf.Dec path, as far as an int64 holds it: the digits, the
	// suffix applied, rounded up to nano units.
	digits := strings.TrimLeft(num+denom, "0")
	if digits == "" {
		digits = "0"
	}
	decScale := int32(len(denom)) // value = unscaled * 10^-decScale
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		decScale--
	}
	unscaled, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return quantity{}, false
	}
	if base == 10 {
		decScale -= exponent
	} else {
		for i := int32(0); i < exponent; i++ {
			if unscaled, ok = mul64(unscaled, 2); !ok {
				return quantity{}, false
			}
		}
	}
	if unscaled != 0 && decScale > 9 {
		unscaled, _ = divRoundUp(unscaled, decScale-9)
		decScale = 9
	}
	if format == "BinarySI" && unscaled > 0 && lessThanOne(unscaled, decScale) {
		format = "DecimalSI"
	}
	if !positive {
		unscaled = -unscaled
	}
	return quantity{value: unscaled, scale: -decScale, format: format, dec: true}, true
}

// splitQuantity is parseQuantityString: sign, numerator without leading
// zeros, denominator, suffix.
func splitQuantity(str string) (positive bool, num, denom, suffix string, ok bool) {
	positive, pos, end := true, 0, len(str)
	if str[0] == '-' || str[0] == '+' {
		positive = str[0] == '+'
		pos++
	}
	for pos < end && str[pos] == '0' {
		pos++
	}
	if pos == end {
		return positive, "0", "", "", true
	}
	start := pos
	for pos < end && str[pos] >= '0' && str[pos] <= '9' {
		pos++
	}
	num = str[start:pos]
	if num == "" {
		num = "0"
	}
	if pos < end && str[pos] == '.' {
		pos++
		start = pos
		for pos < end && str[pos] >= '0' && str[pos] <= '9' {
			pos++
		}
		denom = str[start:pos]
	}
	suffixStart := pos
	for pos < end && strings.IndexByte("eEinumkKMGTP", str[pos]) >= 0 {
		pos++
	}
	if pos < end && (str[pos] == '-' || str[pos] == '+') {
		pos++
	}
	for pos < end && str[pos] >= '0' && str[pos] <= '9' {
		pos++
	}
	return positive, num, denom, str[suffixStart:], pos == end
}

func mul64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	if c/b != a || (a == -1 && b == -1<<63) || (b == -1 && a == -1<<63) {
		return 0, false
	}
	return c, true
}

// divRoundUp divides v by 10^n rounding away from zero (inf.RoundUp);
// exact says whether nothing was lost.
func divRoundUp(v int64, n int32) (int64, bool) {
	exact := true
	for ; n > 0 && v != 0; n-- {
		if v%10 != 0 {
			exact = false
			if v > 0 {
				v = v/10 + 1
			} else {
				v = v/10 - 1
			}
		} else {
			v /= 10
		}
	}
	return v, exact
}

func lessThanOne(unscaled int64, scale int32) bool {
	for ; scale > 0; scale-- {
		unscaled /= 10
	}
	return scale >= 0 && unscaled == 0
}

// String is Quantity.String: the cached string, else CanonicalizeBytes.
func (q quantity) String() string {
	if q.cached != "" {
		return q.cached
	}
	if q.value == 0 {
		return "0"
	}
	format := q.format
	var rounded int64
	if format == "BinarySI" {
		whole, exact := q.atScale0()
		switch {
		case q.lessThan1024():
			format = "DecimalSI"
		case !exact:
			format = "DecimalSI"
		default:
			rounded = whole
		}
	}
	if format == "BinarySI" {
		amount, times := removeFactors(rounded, 1024)
		suffix := ""
		for s, e := range binarySuffixes {
			if e == times*10 {
				suffix = s
			}
		}
		return strconv.FormatInt(amount, 10) + suffix
	}
	amount, times := removeFactors(q.value, 10)
	exponent := q.scale + times
	for exponent%3 != 0 {
		var ok bool
		if amount, ok = mul64(amount, 10); !ok {
			return strconv.FormatInt(q.value, 10) + "e" + strconv.Itoa(int(q.scale))
		}
		exponent--
	}
	if format == "DecimalExponent" {
		if exponent == 0 {
			return strconv.FormatInt(amount, 10)
		}
		return strconv.FormatInt(amount, 10) + "e" + strconv.Itoa(int(exponent))
	}
	for s, e := range decimalSuffixes {
		if e == exponent {
			return strconv.FormatInt(amount, 10) + s
		}
	}
	return strconv.FormatInt(amount, 10)
}

// atScale0 is AsScale(0): the value in units, rounded up.
func (q quantity) atScale0() (int64, bool) {
	if q.scale >= 0 {
		v := q.value
		for i := int32(0); i < q.scale; i++ {
			var ok bool
			if v, ok = mul64(v, 10); !ok {
				return 0, false
			}
		}
		return v, true
	}
	return divRoundUp(q.value, -q.scale)
}

// lessThan1024 is -1024 < q < 1024, exactly.
func (q quantity) lessThan1024() bool {
	v := q.value
	if v < 0 {
		v = -v
	}
	if q.scale >= 0 {
		for i := int32(0); i < q.scale; i++ {
			var ok bool
			if v, ok = mul64(v, 10); !ok {
				return false
			}
		}
		return v < 1024
	}
	limit := int64(1024)
	for i := q.scale; i < 0; i++ {
		var ok bool
		if limit, ok = mul64(limit, 10); !ok {
			return true // |q| fits an int64, 1024 at this scale does not
		}
	}
	return v < limit
}

func removeFactors(v, base int64) (int64, int32) {
	neg := v < 0
	if neg {
		v = -v
	}
	var times int32
	for v >= base && v%base == 0 {
		v /= base
		times++
	}
	if neg {
		v = -v
	}
	return v, times
}
