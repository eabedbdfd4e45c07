<?php

declare(strict_types=1);

namespace Kiln\Redis\Internal;

use Kiln\Redis\ConnectException;
use Kiln\Redis\Endpoint;
use Kiln\Redis\RedisConfig;
use Kiln\Redis\RedisException;
use Kiln\Redis\RedisMode;

/**
 * Asks the Sentinels, in turn, where the master named in the config is now; the first that knows
 * moves to the front, so the next lookup asks it first.
 *
 * @internal
 */
final class SentinelLocator
{
    /** @var list<Endpoint> */
    private array $sentinels;

    public function __construct(private readonly RedisConfig $config)
    {
        if ($config->mode !== RedisMode::Sentinel || $config->masterName === null) {
            throw new \Error('SentinelLocator needs a Sentinel config');
        }
        $this->sentinels = $config->endpoints;
    }

    /** @throws ConnectException */
    public function master(): Endpoint
    {
        $problems = [];
        foreach ($this->sentinels as $index => $sentinel) {
            $config = new RedisConfig([$sentinel], password: $this->config->sentinelPassword, tls: $this->config->tls, verifyPeer: $this->config->verifyPeer, cafile: $this->config->cafile, connectTimeout: $this->config->connectTimeout, commandTimeout: $this->config->connectTimeout);
            try {
                $connection = Connector::connect($config, $sentinel);
                try {
                    $reply = $connection->command(['SENTINEL', 'get-master-addr-by-name', (string) $this->config->masterName]);
                } finally {
                    $connection->close(new ConnectException('Sentinel lookup done'));
                }
            } catch (RedisException $e) {
                $problems[] = "$sentinel: {$e->getMessage()}";
                continue;
            }
            if (!\is_array($reply) || !isset($reply[0], $reply[1]) || !\is_string($reply[0]) || !\is_string($reply[1])) {
                $problems[] = "$sentinel: does not know master \"{$this->config->masterName}\"";
                continue;
            }
            if ($index !== 0) {
                $rest = $this->sentinels;
                unset($rest[$index]);
                $this->sentinels = [$sentinel, ...array_values($rest)];
            }

            return new Endpoint($reply[0], (int) $reply[1]);
        }

        throw new ConnectException("No Sentinel named the master \"{$this->config->masterName}\": " . implode('; ', $problems));
    }
}
