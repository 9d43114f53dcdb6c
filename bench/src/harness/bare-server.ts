// The API-read baseline: bare node:http answering the same JSON as GET /error_codes/400-01.
import http from 'node:http';

const body = process.env.BODY ?? '{}';
const length = String(Buffer.byteLength(body));
http
  .createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': length });
    res.end(body);
  })
  .listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening'));
