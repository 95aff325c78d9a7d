"""Thin wrapper around Debian's fairy-stockfish in UCCI mode (ranks 0-9)."""
import re
import subprocess

FSF = "/usr/games/fairy-stockfish"


def run(cmds, timeout=600):
    inp = "ucci\nsetoption UCI_Variant xiangqi\n" + "".join(c + "\n" for c in cmds) + "quit\n"
    p = subprocess.run([FSF], input=inp, capture_output=True, text=True, timeout=timeout)
    return p.stdout


def perfts(fen, depths):
    """Return {depth: nodes} for each depth, one engine process."""
    cmds = ["position fen " + fen]
    for d in depths:
        cmds.append("go perft %d" % d)
    out = run(cmds)
    nodes = [int(x) for x in re.findall(r"^Nodes searched: (\d+)", out, re.M)]
    if len(nodes) != len(depths):
        raise RuntimeError("unexpected output for %s:\n%s" % (fen, out[-2000:]))
    return dict(zip(depths, nodes))


def divide1(fen):
    """Legal moves (UCCI, ranks 0-9) according to fairy-stockfish."""
    out = run(["position fen " + fen, "go perft 1"])
    body = out.split("ucciok", 1)[1]
    moves = re.findall(r"^([a-i]\d[a-i]\d): 1$", body, re.M)
    n = int(re.search(r"^Nodes searched: (\d+)", body, re.M).group(1))
    assert n == len(moves), (fen, n, moves)
    return moves


def board_info(fen, moves=()):
    cmd = "position fen " + fen
    if moves:
        cmd += " moves " + " ".join(moves)
    out = run([cmd, "d"])
    f = re.search(r"^Fen: (.*)$", out, re.M).group(1).strip()
    ch = re.search(r"^Checkers:(.*)$", out, re.M).group(1).split()
    return f, ch
