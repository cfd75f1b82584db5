# nd_free_port: prints a TCP port for a test server of ours.
#
# Two ways a port that looked free is gone by the time the server binds it:
# another test script of this machine picks it at the same moment (the
# suites run in parallel), or a client connection's local end takes it, when
# the port lies in the kernel's ephemeral range (ip_local_port_range,
# 32768-60999 by default): a listening-only check does not see those.  So
# the port is drawn below that range, no socket of any state may use it,
# and it is reserved by an atomic mkdir under /tmp/nd-ports, holding the
# pid of the reserving script; a reservation whose process is gone is
# taken over.  Reservations are left for the process to outlive: a run
# takes a few dozen of some 17000 ports.
nd_free_port() {
	local dir=/tmp/nd-ports lo port pid
	lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
	[ "$lo" -gt 16000 ] || lo=32768
	mkdir -p "$dir" && chmod 1777 "$dir" 2>/dev/null || true
	while :; do
		port=$((15000 + RANDOM % (lo - 15000)))
		[ -z "$(ss -tanH "sport = :$port" 2>/dev/null)" ] || continue
		if mkdir "$dir/$port" 2>/dev/null; then
			echo "$$" >"$dir/$port/pid"
			echo "$port"
			return
		fi
		pid=$(cat "$dir/$port/pid" 2>/dev/null || true)
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			rm -rf "$dir/$port"
		fi
	done
}
