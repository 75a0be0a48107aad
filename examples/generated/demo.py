"""Calls every method of the example services through the generated warren_api.py, and checks each answer.

    /usr/bin/python3 demo.py amqp://guest:guest@127.0.0.1:5672 warren

Prints one `ok <what>` line per check, `FAIL <what>: <why>` for a failed one, and exits 1 if any failed.
test/integration/gen.int.test.ts runs it against the real services.
"""
import sys

from warren_api import Api, Notifications, WarrenClient, WarrenError

failures = []


def check(what, got, expected):
    if got == expected:
        print(f"ok {what}")
    else:
        failures.append(what)
        print(f"FAIL {what}: got {got!r}, expected {expected!r}")


def main(url: str, namespace: str) -> int:
    with WarrenClient(url, namespace, default_timeout=20.0) as client:
        api = Api(client)
        check("add by position", api.add((4, 5)), 9)
        check("add by name", api.add({"a": 1, "b": 2}), 3)
        check("subtract by position", api.subtract((42, 23)), 19)
        check("subtract by name", api.subtract({"minuend": 42, "subtrahend": 23}), 19)
        check("sum", api.sum([1, 2, 4]), 7)
        check("get_data", api.get_data(), ["hello", 5])
        check("calculate", api.calculate({"expression": "1+3+6"}), "10")
        try:
            api.calculate({"expression": "1+"})
            check("calculate error", "no error", -32602)
        except WarrenError as err:
            check("calculate error", err.code, -32602)
        rendered = api.report_render({"size": 2, "title": "py"})
        check("report.render", (rendered["size"], rendered["pages"], rendered["report"].startswith("py-")), (2, 20, True))
        progress = api.report_progress([rendered["report"][len("py-"):]])
        check("report.progress", progress is not None and progress["state"], "done")
        check("report.progress unknown", api.report_progress({"callId": "nobody"}), None)
        Notifications(client).notify_sum([1, 2, 3])
        # The audit service records it a moment later; ask until it is there (bounded).
        seen = False
        for _ in range(100):
            if any(e.get("params") == [1, 2, 3] for e in api.audit_recent({"method": "notify_sum", "limit": 10})):
                seen = True
                break
            client.sleep(0.05)
        check("notify_sum recorded (audit.recent)", seen, True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
