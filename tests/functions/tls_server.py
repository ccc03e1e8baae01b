"""A tiny HTTPS stand-in for S3 on loopback addresses, with a self-signed certificate for a name
no DNS serves: enough GetObject/HeadObject for the function's strategies, and a note of the SNI
name and address of every connection, so tests see where a client really connected."""

import datetime
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def self_signed(name: str, directory) -> tuple[str, str]:
    """(certificate file, key file) of a self-signed certificate for DNS name `name`."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))  # fmt: skip
    cert_file, key_file = directory / f"{name}.pem", directory / f"{name}.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))  # fmt: skip
    return str(cert_file), str(key_file)


class FakeS3:
    """Serves `body` for any key (ranges too), over TLS with (cert, key), on `address`:`port` (0: any);
    `close_each`: every response closes its connection (the client connects, and resolves, anew); a
    request that asks for the close (`Connection: close`) is answered so and closed, as S3 does."""

    def __init__(self, address: str, port: int, cert: tuple[str, str], body: bytes, close_each: bool = False):
        self.connections: list[tuple[str, str]] = []  # (SNI name, local address) per handshake
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*cert)
        context.sni_callback = lambda sock, name, _: self.connections.append((name, sock.getsockname()[0]))

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_HEAD(self):
                self._headers(200, len(body))

            def do_GET(self):
                first, last = self._range()
                self._headers(206 if self.headers.get("Range") else 200, last - first + 1,
                              f"bytes {first}-{last}/{len(body)}")
                self.wfile.write(body[first:last + 1])

            def _range(self) -> tuple[int, int]:
                """The bytes a `Range: bytes=a-b` header asks for (all of them without one)."""
                wanted = self.headers.get("Range", "").removeprefix("bytes=")
                if not wanted:
                    return 0, len(body) - 1
                first, _, last = wanted.partition("-")
                return int(first), min(int(last or len(body) - 1), len(body) - 1)

            def _headers(self, status: int, length: int, content_range: str | None = None):
                self.send_response(status)
                headers = {"Content-Length": str(length), "ETag": '"e"', "x-amz-request-id": "fake",
                           "Content-Type": "binary/octet-stream"}
                if status == 206:
                    headers["Content-Range"] = content_range
                if close_each or self.close_connection:  # the request's `Connection: close` sets it
                    headers["Connection"] = "close"
                    self.close_connection = True
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer((address, port), Handler)
        self.server.daemon_threads = True
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
