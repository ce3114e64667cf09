//! `--h2`: sockets over HTTP/2 (RFC 8441), as a browser opens them once it holds a connection to the server: one
//! h2c connection (prior knowledge) per process carries every socket, each an extended CONNECT stream. The
//! stream's halves become the socket's reader and writer, so everything else runs unchanged.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

pub type Sender = h2::client::SendRequest<Bytes>;

/// The connection every socket shares: opened once, after the server advertised extended CONNECT. Large windows,
/// as browsers set them, so flow control never paces a benchmark.
pub async fn connect(addr: &str) -> io::Result<Sender> {
    let tcp = TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    let (send, conn) = h2::client::Builder::new()
        .initial_window_size(4 << 20)
        .initial_connection_window_size(64 << 20)
        .handshake(tcp)
        .await
        .map_err(io::Error::other)?;
    tokio::task::spawn_local(async move {
        let _ = conn.await;
    });
    let send = send.ready().await.map_err(io::Error::other)?;
    for _ in 0..500 {
        if send.is_extended_connect_protocol_enabled() {
            return Ok(send);
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    Err(io::Error::other("the server did not advertise SETTINGS_ENABLE_CONNECT_PROTOCOL"))
}

/// Opens a socket at `path`: its reader and writer, and the response's headers (lower-cased `name: value`
/// lines), once the server answered 200.
pub async fn open(
    sender: &Sender,
    authority: &str,
    path: &str,
    offer: Option<&str>,
) -> io::Result<(StreamReader, StreamWriter, String)> {
    let mut req = http::Request::builder()
        .method(http::Method::CONNECT)
        .uri(format!("http://{authority}{path}"))
        .header("sec-websocket-version", "13");
    if let Some(offer) = offer {
        req = req.header("sec-websocket-extensions", offer);
    }
    let mut req = req.body(()).map_err(io::Error::other)?;
    req.extensions_mut().insert(h2::ext::Protocol::from_static("websocket"));
    let mut sender = sender.clone().ready().await.map_err(io::Error::other)?;
    let (response, send) = sender.send_request(req, false).map_err(io::Error::other)?;
    let response = response.await.map_err(io::Error::other)?;
    if response.status() != 200 {
        return Err(io::Error::other(format!("no 200: {}", response.status())));
    }
    let head = response
        .headers()
        .iter()
        .map(|(n, v)| format!("{n}: {}\r\n", String::from_utf8_lossy(v.as_bytes())))
        .collect::<String>()
        .to_ascii_lowercase();
    let recv = response.into_body();
    Ok((StreamReader { recv, pending: Bytes::new() }, StreamWriter { send }, head))
}

/// The stream's received DATA as bytes to read; capacity is given back as it is read.
pub struct StreamReader {
    recv: h2::RecvStream,
    pending: Bytes,
}

impl AsyncRead for StreamReader {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        while self.pending.is_empty() {
            match ready!(self.recv.poll_data(cx)) {
                Some(Ok(data)) => {
                    let _ = self.recv.flow_control().release_capacity(data.len());
                    self.pending = data;
                }
                Some(Err(e)) => return Poll::Ready(Err(io::Error::other(e))),
                None => return Poll::Ready(Ok(())),
            }
        }
        let n = self.pending.len().min(buf.remaining());
        buf.put_slice(&self.pending.split_to(n));
        Poll::Ready(Ok(()))
    }
}

/// Writes as DATA frames on the stream, each waiting for the window it needs.
pub struct StreamWriter {
    send: h2::SendStream<Bytes>,
}

impl AsyncWrite for StreamWriter {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        self.send.reserve_capacity(buf.len());
        loop {
            match ready!(self.send.poll_capacity(cx)) {
                // Nothing granted yet: wait on.
                Some(Ok(0)) => continue,
                Some(Ok(granted)) => {
                    let n = granted.min(buf.len());
                    self.send.send_data(Bytes::copy_from_slice(&buf[..n]), false).map_err(io::Error::other)?;
                    return Poll::Ready(Ok(n));
                }
                Some(Err(e)) => return Poll::Ready(Err(io::Error::other(e))),
                None => return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        let _ = self.send.send_data(Bytes::new(), true);
        Poll::Ready(Ok(()))
    }
}
