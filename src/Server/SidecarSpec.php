<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * A set of processes a worker asks the supervisor to run beside it (see Sidecars): $count copies of
 * $command, each listening on its own unix socket. The supervisor names the socket and puts its path
 * wherever an argument holds `{socket}`; the process is up once that socket accepts connections.
 * $env is the whole environment the process gets (nothing is inherited).
 * With a $probe, the supervisor sends those bytes on a fresh connection to each member that is up, every
 * few seconds; a member that has answered none (not one byte back) for $probeTimeout seconds has stopped
 * answering, and is killed and replaced.
 * With $batch, the supervisor starts it under the kernel's SCHED_BATCH policy where it can (see Sidecars).
 */
final class SidecarSpec
{
    public const SOCKET = '{socket}';

    /**
     * @param non-empty-list<string> $command an absolute path or a name looked up in $env's PATH, then arguments
     * @param array<string, string> $env
     */
    public function __construct(
        /** Unique among the sets of one worker: [A-Za-z0-9._-], 1–64 characters. */
        public readonly string $name,
        public readonly array $command,
        public readonly array $env,
        public readonly int $count,
        /**
         * One set for the whole server rather than one per worker: the first worker to ask starts it, the
         * others are told where it is, and it runs until the server stops (the isolated tier's php-cgi parent).
         */
        public readonly bool $shared = false,
        public readonly string $probe = '',
        public readonly float $probeTimeout = 0.0,
        /**
         * Run as a batch job (Linux's SCHED_BATCH): its wake-ups never preempt a running process, so the server's
         * workers are not switched out at every request they hand it (docs/design/033).
         */
        public readonly bool $batch = false,
    ) {
        if (preg_match('/^[A-Za-z0-9._-]{1,64}$/', $name) !== 1) {
            throw new \ValueError("Sidecar name '$name' must be 1-64 characters of A-Z, a-z, 0-9, '.', '_' or '-'");
        }
        if ($count < 1 || $count > 256) {
            throw new \ValueError("A sidecar set has 1 to 256 processes, got $count");
        }
        if (!\in_array(true, array_map(static fn(string $arg): bool => str_contains($arg, self::SOCKET), $command), true)) {
            throw new \ValueError('A sidecar command must name its socket: put ' . self::SOCKET . ' in an argument');
        }
        if ($probe !== '' && !($probeTimeout > 0.0)) {
            throw new \ValueError("A sidecar probe needs a timeout above 0 s, got $probeTimeout");
        }
        foreach ($env as $key => $value) {
            if ($key === '' || str_contains($key, '=') || str_contains($key . $value, "\0")) {
                throw new \ValueError("Bad environment variable '$key' for sidecar '$name'");
            }
        }
    }

    /** @return non-empty-list<string> the command with the socket path in place */
    public function commandFor(string $socket): array
    {
        return array_map(static fn(string $arg): string => str_replace(self::SOCKET, $socket, $arg), $this->command);
    }

    public function toJson(): string
    {
        return json_encode(['name' => $this->name, 'command' => $this->command, 'env' => (object) $this->env, 'count' => $this->count, 'shared' => $this->shared,
            'probe' => base64_encode($this->probe), 'probeTimeout' => $this->probeTimeout, 'batch' => $this->batch], JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES);
    }

    /** @throws \ValueError for anything but what toJson() makes */
    public static function fromJson(string $json): self
    {
        try {
            $data = json_decode($json, true, 8, JSON_THROW_ON_ERROR);
        } catch (\JsonException $e) {
            throw new \ValueError('Sidecar spec is not JSON: ' . $e->getMessage(), 0, $e);
        }
        if (!\is_array($data) || !\is_string($data['name'] ?? null) || !\is_int($data['count'] ?? null)
            || !\is_array($data['command'] ?? null) || !\is_array($data['env'] ?? null)) {
            throw new \ValueError('Sidecar spec needs name, command, env and count');
        }
        $command = [];
        foreach ($data['command'] as $arg) {
            $command[] = \is_string($arg) ? $arg : throw new \ValueError('Sidecar command arguments must be strings');
        }
        $env = [];
        foreach ($data['env'] as $key => $value) {
            $env[(string) $key] = \is_string($value) ? $value : throw new \ValueError('Sidecar environment values must be strings');
        }
        if ($command === []) {
            throw new \ValueError('Sidecar command is empty');
        }
        $probe = base64_decode(\is_string($data['probe'] ?? null) ? $data['probe'] : '', true);
        $timeout = $data['probeTimeout'] ?? 0.0;
        if ($probe === false || !\is_int($timeout) && !\is_float($timeout)) {
            throw new \ValueError('Sidecar probe must be base64 and its timeout a number');
        }
        $shared = ($data['shared'] ?? false) === true;
        return new self($data['name'], $command, $env, $data['count'], $shared, $probe, (float) $timeout, ($data['batch'] ?? false) === true);
    }
}
