"""Runs the Python service: add, sleep (honours cancel and deadline), fail and echo.
Prints "ready" once it consumes and has announced; "started <call id>" when
sleep starts, "cancelled <call id>" when a cancel stopped it; stops on SIGTERM or SIGINT.

usage: service_main.py AMQP_URL NAMESPACE SERVICE_NAME
"""
import signal
import sys

from warren_service import RpcError, WarrenService


def add(params, _ctx):
    """Adds two numbers: [a, b] or {a, b}."""
    a, b = (params.get("a"), params.get("b")) if isinstance(params, dict) else (params + [None, None])[:2] if isinstance(params, list) else (None, None)
    problems = [{"path": f"/{i}", "keyword": "type", "message": "must be number"} for i, v in enumerate((a, b)) if not isinstance(v, (int, float)) or isinstance(v, bool)]
    if problems:
        raise RpcError(-32602, "Invalid params", problems)
    return a + b


def sleep(params, ctx):
    """Sleeps [ms] milliseconds, stopping early when cancelled."""
    ms = params[0] if isinstance(params, list) and params and isinstance(params[0], (int, float)) else 0
    print(f"started {ctx.call_id}", flush=True)
    if not ctx.sleep(ms / 1000):
        if ctx.reason == "cancelled":
            print(f"cancelled {ctx.call_id}", flush=True)
        return "stopped"
    return "slept"


def fail(_params, _ctx):
    """Always fails."""
    raise RpcError(-32000, "Server error", {"reason": "fails on purpose"})


def echo(params, _ctx):
    """Returns its params."""
    return params


def main():
    url, namespace, name = sys.argv[1], sys.argv[2], sys.argv[3]
    service = WarrenService(url, name, {"py.add": add, "py.sleep": sleep, "py.fail": fail, "py.echo": echo}, namespace=namespace)
    signal.signal(signal.SIGTERM, lambda *_: service.stop())
    signal.signal(signal.SIGINT, lambda *_: service.stop())
    service.serve(ready=lambda: print("ready", flush=True))


if __name__ == "__main__":
    main()
