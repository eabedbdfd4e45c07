<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Scale;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PeerProcess;
use Kiln\Tests\Support\RedisServer;
use PHPUnit\Framework\TestCase;

/**
 * Redis, three Kiln nodes of examples/realtime/app.php (2 workers each, the same --redis) and nginx round-robin in
 * front (the configuration docs/scaling.md shows), all on loopback: sessions, counters and the cache are one across
 * the nodes, a node killed with SIGKILL is routed around, and a Redis restart is survived without restarting Kiln.
 */
final class ScaleOutTest extends TestCase
{
    private const APP = __DIR__ . '/../../../examples/realtime/app.php';

    /** @var resource|null nginx or HAProxy */
    private mixed $nginx = null;

    /** The front proxy's config and logs. */
    private ?string $proxyDir = null;

    protected function setUp(): void
    {
        // A precondition, not a skip: `make test` installs it (scripts/install-deps.sh).
        self::assertTrue(\extension_loaded('curl'), 'this test drives the nodes with ext-curl: install php-curl (scripts/install-deps.sh does)');
    }

    protected function tearDown(): void
    {
        if (\is_resource($this->nginx)) {
            $pid = (int) proc_get_status($this->nginx)['pid'];
            posix_kill($pid, SIGTERM);
            $deadline = microtime(true) + 5.0;
            while (proc_get_status($this->nginx)['running'] && microtime(true) < $deadline) {
                usleep(20_000);
            }
            if (proc_get_status($this->nginx)['running']) {
                posix_kill($pid, SIGKILL);
            }
            proc_close($this->nginx);
        }
        if ($this->proxyDir !== null) {
            PeerProcess::removeDir($this->proxyDir);
            $this->proxyDir = null;
        }
    }

    public function testSessionsCountersAndTheCacheAreOneAcrossNodesAndSurviveANodeAndRedisGoingAway(): void
    {
        // Redis writes every command to its append-only file, so a kill -9 of Redis loses nothing.
        $redis = RedisServer::start(['--appendonly', 'yes', '--appendfsync', 'always']);
        /** @var list<KilnProcess> $nodes */
        $nodes = [];
        try {
            for ($n = 0; $n < 3; $n++) {
                $nodes[] = KilnProcess::start(self::APP, ['--workers=2', '--redis=' . $redis->uri() . '?timeout=2&connect_timeout=1', '--redis-cache-ttl=30']);
            }
            $front = $this->startNginx(array_map(static fn(KilnProcess $node): int => $node->port(), $nodes));

            // A session made through one node is used through the others (round-robin: one node per request).
            $cookie = self::sixVisits($front, 'the six visits went through all three nodes');

            // 1,000 concurrent increments through the front give exactly 1,000, each value once.
            $values = self::concurrentPosts("$front/counter/hits", 1000, 50);
            sort($values);
            self::assertSame(range(1, 1000), $values);

            // A cache write through one node is read through the others at once (there is no copy to go stale).
            self::assertSame(204, self::request('PUT', $nodes[0]->baseUrl() . '/cache/greeting', null, 'hello from node 0')[0]);
            foreach ([1, 2] as $n) {
                self::assertSame([200, 'hello from node 0'], \array_slice(self::request('GET', $nodes[$n]->baseUrl() . '/cache/greeting'), 0, 2), "node $n");
            }

            // Each node now holds its own copy (its first level, kept up to --redis-cache-ttl=30 s here); a new write
            // through node 0 reaches the others through the invalidation sent on the bus, far sooner than that.
            self::assertSame(204, self::request('PUT', $nodes[0]->baseUrl() . '/cache/greeting', null, 'hello again')[0]);
            foreach ([1, 2] as $n) {
                $start = microtime(true);
                do {
                    [, $body] = self::request('GET', $nodes[$n]->baseUrl() . '/cache/greeting');
                } while ($body !== 'hello again' && microtime(true) - $start < 5.0 && usleep(5_000) === null);
                self::assertSame('hello again', $body, "node $n dropped its copy when told, not when it expired");
            }
            self::assertSame(204, self::request('PUT', $nodes[0]->baseUrl() . '/cache/greeting', null, 'hello from node 0')[0]);

            // kill -9 one node, workers and all: nginx routes around it and the session carries on.
            foreach ([...$nodes[1]->workerPids(), $nodes[1]->pid()] as $pid) {
                posix_kill($pid, SIGKILL);
            }
            for ($i = 7; $i <= 10; $i++) {
                [$status, $body] = self::request('GET', "$front/session/visits", $cookie);
                self::assertSame(200, $status, $body);
                self::assertSame($i, json_decode($body, true)['visits'] ?? null, "visit $i after a node died");
            }

            // Redis goes away: requests that need it get a clear 503; back, everything works again by itself.
            $redis->kill();
            [$status, , , $headers] = self::request('POST', $nodes[0]->baseUrl() . '/counter/hits');
            self::assertSame(503, $status);
            self::assertStringContainsString('Retry-After: 1', $headers);
            $redis->restart();
            $deadline = microtime(true) + 20.0;
            do {
                [$status, $body] = self::request('GET', "$front/session/visits", $cookie);
            } while ($status !== 200 && microtime(true) < $deadline && usleep(100_000) === null);
            self::assertSame(200, $status, 'the nodes use Redis again without a restart: ' . $body);
            self::assertSame(11, json_decode($body, true)['visits'] ?? null, 'the session kept through the Redis restart');
            // Each worker reconnects on its own next use, after its backoff: poll until every node answers.
            $answers = [];
            $deadline = microtime(true) + 20.0;
            while (\count($answers) < 3 && microtime(true) < $deadline) {
                [$status, $body] = self::request('GET', "$front/cache/greeting");
                $status === 200 ? $answers[] = $body : usleep(100_000);
            }
            self::assertSame(array_fill(0, 3, 'hello from node 0'), $answers, 'the cache written before the restart, through every node');
            do {
                [$status, $body] = self::request('POST', "$front/counter/hits");
            } while ($status !== 200 && microtime(true) < $deadline && usleep(100_000) === null);
            self::assertSame(1001, json_decode($body, true)['value'] ?? null, 'the counter went on from where it was: ' . $body);
        } finally {
            foreach ($nodes as $node) {
                if ($node->isRunning()) {
                    $node->stop();
                }
            }
            $redis->stop();
        }
    }

    public function testBehindHaproxyASessionAndACounterAreOneAcrossNodes(): void
    {
        $redis = RedisServer::start();
        /** @var list<KilnProcess> $nodes */
        $nodes = [];
        try {
            for ($n = 0; $n < 3; $n++) {
                $nodes[] = KilnProcess::start(self::APP, ['--workers=1', '--redis=' . $redis->uri()]);
            }
            $front = $this->startHaproxy(array_map(static fn(KilnProcess $node): int => $node->port(), $nodes));
            self::sixVisits($front, 'round-robin over the three nodes');
            $values = self::concurrentPosts("$front/counter/through-haproxy", 300, 30);
            sort($values);
            self::assertSame(range(1, 300), $values);
        } finally {
            foreach ($nodes as $node) {
                $node->stop();
            }
            $redis->stop();
        }
    }

    /**
     * HAProxy round-robin over the nodes, with the backend of docs/scaling.md (no TLS on loopback).
     *
     * @param list<int> $ports
     */
    private function startHaproxy(array $ports): string
    {
        self::assertFileExists('/usr/sbin/haproxy', 'haproxy is missing: scripts/install-deps.sh dev installs it');
        $dir = $this->frontDir('haproxy');
        $port = self::freePort();
        $servers = implode("\n", array_map(static fn(int $i, int $p): string => "    server n$i 127.0.0.1:$p check", array_keys($ports), $ports));
        file_put_contents("$dir/haproxy.cfg", <<<CFG
            global
                maxconn 1024
            defaults
                mode http
                timeout connect 5s
                timeout client 30s
                timeout server 30s
            frontend www
                bind 127.0.0.1:$port
                default_backend kiln
            backend kiln
                balance roundrobin
                option forwardfor
                timeout tunnel 1h
            $servers

            CFG);
        return $this->startFront(['/usr/sbin/haproxy', '-db', '-f', "$dir/haproxy.cfg"], $dir, $port);
    }

    /**
     * nginx, one worker, round-robin over the nodes; the same proxy settings as docs/scaling.md.
     *
     * @param list<int> $ports
     */
    private function startNginx(array $ports): string
    {
        self::assertFileExists('/usr/sbin/nginx', 'nginx is missing: scripts/install-deps.sh dev installs it');
        $dir = $this->frontDir('nginx');
        $port = self::freePort();
        $servers = implode("\n", array_map(static fn(int $p): string => "        server 127.0.0.1:$p max_fails=1 fail_timeout=10s;", $ports));
        file_put_contents("$dir/nginx.conf", <<<CONF
            worker_processes 1;
            daemon off;
            pid $dir/nginx.pid;
            error_log $dir/error.log;
            events { worker_connections 1024; }
            http {
                access_log off;
                client_body_temp_path $dir/body;
                proxy_temp_path $dir/proxy;
                fastcgi_temp_path $dir/fastcgi;
                uwsgi_temp_path $dir/uwsgi;
                scgi_temp_path $dir/scgi;
                upstream kiln {
            $servers
                    keepalive 32;
                }
                map \$http_upgrade \$connection_upgrade {
                    default upgrade;
                    ''      '';
                }
                server {
                    listen 127.0.0.1:$port;
                    location / {
                        proxy_pass http://kiln;
                        proxy_http_version 1.1;
                        proxy_set_header Host \$host;
                        proxy_set_header Upgrade \$http_upgrade;
                        proxy_set_header Connection \$connection_upgrade;
                        proxy_set_header X-Forwarded-For \$remote_addr;
                        proxy_set_header X-Forwarded-Proto \$scheme;
                        proxy_next_upstream error timeout http_502;
                        proxy_read_timeout 1h;
                    }
                }
            }
            CONF);
        return $this->startFront(['/usr/sbin/nginx', '-p', $dir, '-c', "$dir/nginx.conf"], $dir, $port);
    }

    /** A fresh temp dir for the front proxy's config and logs, removed by tearDown(). */
    private function frontDir(string $name): string
    {
        return $this->proxyDir = PeerProcess::tempDir("kiln-scale-$name");
    }

    /**
     * Starts the front proxy (its output in $dir) and waits until it listens on $port.
     *
     * @param list<string> $command
     */
    private function startFront(array $command, string $dir, int $port): string
    {
        $process = proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$dir/stdout.log", 'w'], 2 => ['file', "$dir/stderr.log", 'w']], $pipes);
        self::assertIsResource($process);
        $this->nginx = $process;
        $stderr = "$dir/stderr.log";
        $deadline = microtime(true) + 10.0;
        while (@stream_socket_client("tcp://127.0.0.1:$port", $errno, $error, 0.2) === false) {
            self::assertTrue(proc_get_status($process)['running'], 'the proxy exited: ' . @file_get_contents($stderr));
            self::assertLessThan($deadline, microtime(true), 'the proxy did not listen within 10 s');
            usleep(50_000);
        }
        return "http://127.0.0.1:$port";
    }

    /**
     * Six visits through the front with one session: each is counted once more in the session, and together
     * they went through all three nodes. Returns the session cookie.
     */
    private static function sixVisits(string $front, string $allNodes): ?string
    {
        $cookie = null;
        $seen = [];
        for ($i = 1; $i <= 6; $i++) {
            [$status, $body, $cookie] = self::request('GET', "$front/session/visits", $cookie);
            self::assertSame(200, $status, $body);
            $visits = json_decode($body, true);
            self::assertIsArray($visits);
            self::assertSame($i, $visits['visits'], "visit $i");
            $seen[] = $visits['node'];
        }
        self::assertCount(3, array_unique($seen), $allNodes);
        return $cookie;
    }

    private static function freePort(): int
    {
        $probe = stream_socket_server('tcp://127.0.0.1:0');
        self::assertNotFalse($probe);
        $port = (int) substr((string) strrchr((string) stream_socket_get_name($probe, false), ':'), 1);
        fclose($probe);
        return $port;
    }

    /** @return array{int, string, ?string, string} status, body, the PHPSESSID cookie (as sent back), headers */
    private static function request(string $method, string $url, ?string $cookie = null, ?string $body = null): array
    {
        $curl = curl_init($url);
        curl_setopt_array($curl, [CURLOPT_CUSTOMREQUEST => $method, CURLOPT_RETURNTRANSFER => true, CURLOPT_HEADER => true, CURLOPT_TIMEOUT => 10]);
        if ($cookie !== null) {
            curl_setopt($curl, CURLOPT_COOKIE, $cookie);
        }
        if ($body !== null) {
            curl_setopt($curl, CURLOPT_POSTFIELDS, $body);
        }
        $raw = (string) curl_exec($curl);
        $status = (int) curl_getinfo($curl, CURLINFO_RESPONSE_CODE);
        $headerSize = (int) curl_getinfo($curl, CURLINFO_HEADER_SIZE);
        curl_close($curl);
        $headers = substr($raw, 0, $headerSize);
        if (preg_match('/^Set-Cookie: (PHPSESSID=[^;\r\n]*)/mi', $headers, $m) === 1) {
            $cookie = $m[1];
        }
        return [$status, substr($raw, $headerSize), $cookie, $headers];
    }

    /** @return list<int> the counter values the POSTs answered */
    private static function concurrentPosts(string $url, int $count, int $parallel): array
    {
        $multi = curl_multi_init();
        $values = [];
        $started = 0;
        $running = 0;
        $add = static function () use ($multi, $url, &$started): void {
            $curl = curl_init($url);
            curl_setopt_array($curl, [CURLOPT_POST => true, CURLOPT_POSTFIELDS => '', CURLOPT_RETURNTRANSFER => true, CURLOPT_TIMEOUT => 30]);
            curl_multi_add_handle($multi, $curl);
            $started++;
        };
        while ($started < min($parallel, $count)) {
            $add();
        }
        do {
            curl_multi_exec($multi, $running);
            curl_multi_select($multi, 1.0);
            while (($info = curl_multi_info_read($multi)) !== false) {
                $curl = $info['handle'];
                $status = curl_getinfo($curl, CURLINFO_RESPONSE_CODE);
                $answer = json_decode((string) curl_multi_getcontent($curl), true);
                self::assertSame(200, $status, 'a counter POST failed');
                self::assertIsArray($answer);
                $values[] = $answer['value'];
                curl_multi_remove_handle($multi, $curl);
                curl_close($curl);
                if ($started < $count) {
                    $add();
                    $running++;
                }
            }
        } while ($running > 0 || \count($values) < $started);
        curl_multi_close($multi);
        return $values;
    }
}
