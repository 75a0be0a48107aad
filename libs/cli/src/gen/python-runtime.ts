// The pika client every generated Python module carries (python.ts puts it after the types):
// written from docs/protocol.md. Kept as a TypeScript string, not a .py file beside it, because
// only dist/ ships in the Docker image; test/integration/gen.int.test.ts runs it (demo.py).
export const pythonRuntime = `class WarrenError(Exception):
    """A JSON-RPC error answer (or its stand-in for a failure on this side: -32001, -32601, -32002)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code} {message}")
        self.code = code
        self.message = message
        self.data = data


class WarrenClient:
    """A thin Warren client over pika, as docs/protocol.md says a client must (or should) behave.

    Named reply queue NS.reply.<client id> (durable with x-expires: RabbitMQ 4.3 refuses a queue
    neither durable nor exclusive), consumed with acks; a random 128-bit call id per call as
    correlation_id; publisher confirms and 'mandatory' publishes (a basic.return is -32601, a nack
    -32002); the deadline as x-warren-deadline (an int of ms, which pika writes as an AMQP 'l')
    and as 'expiration' (the service answers -32001 itself for a request that waited too long);
    x-warren-protocol 1 and x-warren-protocol-minor 1; 'cancel' publishes a cancel message on
    NS.cancel. Not thread-safe (pika's BlockingConnection is not).
    """

    def __init__(self, url: str = "amqp://guest:guest@127.0.0.1:5672", namespace: str = "warren", client_id_prefix: str = "", default_timeout: float = 30.0) -> None:
        self.ns = namespace
        self.default_timeout = default_timeout
        self.client_id = f"{client_id_prefix}{'.' if client_id_prefix else ''}{uuid.uuid4().hex[:12]}"
        self._answers: Dict[str, Any] = {}
        self._seq = 0
        params = pika.URLParameters(url)
        params.tcp_options = {"TCP_NODELAY": 1}
        self._conn = pika.BlockingConnection(params)
        self._ch = self._conn.channel()
        # The exchanges a client publishes to, with the flags every peer uses (durable, no arguments).
        for name, kind in (("rpc", "direct"), ("events", "direct"), ("cancel", "fanout")):
            self._ch.exchange_declare(f"{namespace}.{name}", kind, durable=True)
        self.reply_queue = f"{namespace}.reply.{self.client_id}"
        self._ch.queue_declare(self.reply_queue, durable=True, exclusive=False, auto_delete=False, arguments={"x-expires": 60000})
        self._ch.add_on_return_callback(self._returned)
        self._ch.confirm_delivery()
        self._tag = self._ch.basic_consume(self.reply_queue, self._reply, auto_ack=False)

    def __enter__(self) -> "WarrenClient":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def _returned(self, _ch: Any, _method: Any, props: Any, _body: bytes) -> None:
        self._answers.setdefault(props.correlation_id, {"error": {"code": -32601, "message": "Method not found"}})

    def _reply(self, ch: Any, method: Any, props: Any, body: bytes) -> None:
        ch.basic_ack(method.delivery_tag)
        self._answers[props.correlation_id] = json.loads(body)

    def _headers(self, deadline: Optional[int]) -> Dict[str, Any]:
        headers: Dict[str, Any] = {"x-warren-protocol": 1, "x-warren-protocol-minor": 1}
        if deadline is not None:
            headers["x-warren-deadline"] = deadline
        return headers

    def _call_id(self) -> str:
        # Never a counter: a service that saw one request must not guess the next (docs/security.md).
        return f"{self.client_id}.{secrets.token_urlsafe(16)}"

    def call(self, method: str, params: Any = None, timeout: Optional[float] = None, persistent: bool = False) -> Any:
        """Calls 'method' and returns its result; raises WarrenError for an error answer."""
        seconds = self.default_timeout if timeout is None else timeout
        call_id = self._call_id()
        deadline = int(time.time() * 1000 + seconds * 1000)
        self._seq += 1
        message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method, "id": self._seq}
        if params is not None:
            message["params"] = params
        props = pika.BasicProperties(
            content_type="application/json", correlation_id=call_id, reply_to=self.reply_queue,
            expiration=str(max(1, int(seconds * 1000))), delivery_mode=2 if persistent else 1, headers=self._headers(deadline))
        try:
            self._ch.basic_publish(f"{self.ns}.rpc", method, json.dumps(message).encode(), props, mandatory=True)
        except pika.exceptions.UnroutableError:
            pass  # _returned has recorded -32601
        except pika.exceptions.NackError:
            raise WarrenError(-32002, "Service unavailable")
        while call_id not in self._answers:
            left = deadline / 1000 - time.time()
            if left <= 0:
                raise WarrenError(-32001, "Deadline exceeded")
            self._conn.process_data_events(time_limit=min(left, 0.05))
        answer = self._answers.pop(call_id)
        if "error" in answer:
            err = answer["error"]
            raise WarrenError(err.get("code", -32603), err.get("message", ""), err.get("data"))
        return answer.get("result")

    def notify(self, method: str, params: Any = None, persistent: bool = False) -> None:
        """Publishes a notification (confirmed by RabbitMQ; nobody answers)."""
        message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        props = pika.BasicProperties(content_type="application/json", message_id=self._call_id(), delivery_mode=2 if persistent else 1, headers=self._headers(None))
        self._ch.basic_publish(f"{self.ns}.events", method, json.dumps(message).encode(), props)

    def cancel(self, call_id: str, deadline: Optional[int] = None, reason: str = "python client") -> None:
        """Asks every service instance to stop 'call_id' (docs/schemas/cancel.schema.json)."""
        body: Dict[str, Any] = {"v": 1, "type": "cancel", "callId": call_id, "reason": reason}
        ttl = 60000
        if deadline is not None:
            body["deadline"] = deadline
            ttl = max(1, min(60000, int(deadline - time.time() * 1000)))
        props = pika.BasicProperties(content_type="application/json", expiration=str(ttl))
        self._ch.basic_publish(f"{self.ns}.cancel", "", json.dumps(body).encode(), props)

    def sleep(self, seconds: float) -> None:
        """Waits while pika keeps serving the connection (heartbeats), unlike time.sleep."""
        self._conn.sleep(seconds)

    def close(self) -> None:
        """Deletes the reply queue and closes the connection. Idempotent."""
        if self._conn.is_closed:
            return
        try:
            self._ch.basic_cancel(self._tag)
            self._ch.queue_delete(self.reply_queue)
        finally:
            self._conn.close()
`;
