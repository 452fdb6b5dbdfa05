"""SGLang's wing: what its logs put before a message, so that a paste's noise is stripped
and its lines point at SGLang's records."""

from errorkb.projects import Wing


class Sglang(Wing):
    key = "sglang"

    def log_prefixes(self):
        # SGLang's logger: [2025-01-02 10:11:12 DP1 TP0] or, in older releases, the time
        # alone: [14:26:31] and [14:26:31 TP0]
        return [r"\[(?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d(?: (?:DP|PP|TP|EP)\d+)*\] ?"]


WING = Sglang()
