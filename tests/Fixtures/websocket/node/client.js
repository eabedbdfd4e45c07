// WebSocket client scenarios for Kiln's integration tests, on the npm `ws` package.
// Usage: node client.js SCENARIO URL; prints one JSON object on stdout.
'use strict';

const WebSocket = require('ws');

const [scenario, url] = process.argv.slice(2);

function open(options) {
    return new Promise((resolve, reject) => {
        const ws = new WebSocket(url, options);
        const queue = [];
        const waiters = [];
        ws.on('message', (data, isBinary) => {
            const item = { data: Buffer.from(data), isBinary };
            const waiter = waiters.shift();
            waiter ? waiter(item) : queue.push(item);
        });
        ws.next = () => new Promise((res) => {
            const item = queue.shift();
            item ? res(item) : waiters.push(res);
        });
        ws.closed = new Promise((res) => ws.on('close', (code, reason) => res({ code, reason: reason.toString() })));
        ws.on('open', () => resolve(ws));
        ws.on('unexpected-response', (request, response) => reject(new Error('status ' + response.statusCode)));
        ws.on('error', reject);
    });
}

function send(ws, data, options) {
    return new Promise((resolve, reject) => ws.send(data, options, (error) => (error ? reject(error) : resolve())));
}

async function echo() {
    const ws = await open({ perMessageDeflate: false });
    const result = {};
    await send(ws, 'héllo wörld');
    let item = await ws.next();
    result.text = item.data.toString('utf8');
    result.textIsBinary = item.isBinary;
    await send(ws, Buffer.from([0, 1, 2, 255]));
    item = await ws.next();
    result.binary = item.data.toString('hex');
    result.binaryIsBinary = item.isBinary;
    // One text message in three frames: fin only on the last.
    await send(ws, 'frag', { fin: false });
    await send(ws, 'men', { fin: false });
    await send(ws, 'ted ✓', { fin: true });
    item = await ws.next();
    result.fragmented = item.data.toString('utf8');
    const pong = new Promise((resolve) => ws.once('pong', (data) => resolve(data.toString())));
    ws.ping('are you there');
    result.pong = await pong;
    result.extensions = ws.extensions;
    ws.close(1000, 'bye');
    result.close = await ws.closed;
    return result;
}

async function deflate() {
    const ws = await open({ perMessageDeflate: true, maxPayload: 4 * 1024 * 1024 });
    const big = 'kiln '.repeat(100000);
    await send(ws, big);
    const back = await ws.next();
    const messages = [];
    for (let i = 0; i < 20; i++) {
        const text = `message ${i} `.repeat(10);
        await send(ws, text);
        messages.push((await ws.next()).data.toString() === text);
    }
    const result = { extensions: ws.extensions, bigOk: back.data.toString() === big && !back.isBinary, allOk: messages.every(Boolean) };
    ws.close();
    await ws.closed;
    return result;
}

const scenarios = { echo, deflate };
const timer = setTimeout(() => { console.error('timed out'); process.exit(2); }, 30000);
scenarios[scenario]().then((result) => {
    clearTimeout(timer);
    console.log(JSON.stringify(result));
}, (error) => {
    clearTimeout(timer);
    console.log(JSON.stringify({ error: error.message }));
    process.exitCode = 1;
});
