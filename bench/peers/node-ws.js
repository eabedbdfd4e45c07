// Node.js WebSocket peer for bench/run ws, on the npm `ws` package (one process, as node runs).
// Usage: NODE_PATH=DIR/node_modules node node-ws.js PORT
//   /room: every message goes to every /room member (sender included); any other path echoes,
//   text as text and binary as binary. Prints "listening" once bound.
'use strict';
const { WebSocketServer } = require('ws');

const port = Number(process.argv[2] || 18090);
const room = new Set();
const server = new WebSocketServer({ host: '127.0.0.1', port, perMessageDeflate: false, clientTracking: false });

server.on('connection', (socket, request) => {
  const inRoom = request.url === '/room' || request.url.startsWith('/ws/rooms/');
  if (inRoom) {
    room.add(socket);
    socket.on('close', () => room.delete(socket));
  }
  socket.on('message', (data, isBinary) => {
    if (inRoom) {
      for (const member of room) {
        member.send(data, { binary: isBinary });
      }
    } else {
      socket.send(data, { binary: isBinary });
    }
  });
  socket.on('error', () => {});
});
server.on('listening', () => console.log('listening'));
