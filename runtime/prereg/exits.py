"""The exit statuses of every prereg command (README.md, "Exit codes", has the same table).

=====  ==================================================================================
0      done: everything the command checks holds
1      the command ran and found what it checks for: a stale or edited generated/, a
       sealed study changed without an amendment, a registered change no amendment
       declares (``diff``), a freeze manifest that does not hold (``validate``), a seed
       failing the audit (``audit-sweep``), a failed diagnostic contract, a failed demo step
2      bad usage or bad input (``error: ...`` on stderr), or out of memory: nothing was written
3      the power plan is infeasible (``power-plan``; the plan is still written)
130    interrupted (Ctrl-C)
141    stdout was closed before the command finished (a broken pipe, as shells report it)
=====  ==================================================================================
"""

OK = 0
FAILED = 1
USAGE = 2
INFEASIBLE = 3
INTERRUPTED = 130
BROKEN_PIPE = 141
