<?php

declare(strict_types=1);

namespace Kiln\App\Middleware;

use Kiln\App\HttpErrorException;
use Kiln\App\Middleware;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * HTTP Basic authentication (RFC 7617). A missing, malformed or wrong Authorization header → 401 with
 * WWW-Authenticate; success sets the request attribute `user`.
 *
 * Credentials are password_hash() outputs, never plain passwords (refused at construction), checked with
 * password_verify (constant time). An unknown user is verified against another user's hash, so its timing
 * matches a wrong password's. Hashes are slow on purpose and run on the worker's loop, so a success is
 * remembered (an HMAC of user and password under a per-instance key, at most CACHE_SIZE entries) and a
 * returning client does not pay the hash again. Failures are never cached: put RateLimit in front. A
 * Closure's answers are not cached either (it may consult state that changes).
 */
final class BasicAuth implements Middleware
{
    public const ATTRIBUTE = 'user';

    private const CACHE_SIZE = 1024;

    /** @var array<string, string> user => password hash */
    private readonly array $users;

    private readonly ?\Closure $check;

    /** A real hash to verify unknown users against, so they take as long as wrong passwords. */
    private readonly string $decoy;

    private readonly string $cacheKey;

    /** @var array<string, true> */
    private array $verified = [];

    /**
     * @param array<string, string>|\Closure(string, string): bool $credentials user => password_hash()
     *        output, or a Closure(user, password) deciding (it should compare in constant time)
     */
    public function __construct(
        array|\Closure $credentials,
        private readonly string $realm = 'Restricted',
    ) {
        $users = [];
        if (\is_array($credentials)) {
            if ($credentials === []) {
                throw new \ValueError('BasicAuth needs at least one user => password_hash() entry, or a Closure');
            }
            foreach ($credentials as $user => $hash) {
                if (!\is_string($hash) || password_get_info($hash)['algo'] === null) {
                    throw new \ValueError("BasicAuth credentials hold password_hash() outputs, not passwords: hash the one for user '$user' with password_hash()");
                }
                if (str_contains((string) $user, ':')) {
                    throw new \ValueError("BasicAuth user names cannot contain ':', got '$user'");
                }
                $users[(string) $user] = $hash;
            }
        }
        if (preg_match('/[\x00-\x1f\x7f]/', $realm) === 1) {
            throw new \ValueError('BasicAuth realm cannot contain control characters');
        }
        $this->users = $users;
        $this->decoy = $users === [] ? '' : $users[array_key_first($users)];
        $this->check = $credentials instanceof \Closure ? $credentials : null;
        $this->cacheKey = random_bytes(32);
    }

    public function process(Request $request, RequestHandler $next): Response
    {
        $credentials = self::parse((string) $request->header('Authorization'));
        if ($credentials === null || !$this->verify(...$credentials)) {
            throw HttpErrorException::unauthorized($this->realm);
        }
        $request->setAttribute(self::ATTRIBUTE, $credentials[0]);
        return $next->handle($request);
    }

    /** @return array{string, string}|null user and password */
    private static function parse(string $header): ?array
    {
        if (preg_match('/^Basic[ \t]+([A-Za-z0-9+\/]+=*)[ \t]*$/iD', $header, $m) !== 1) {
            return null;
        }
        $decoded = base64_decode($m[1], true);
        if ($decoded === false || !str_contains($decoded, ':')) {
            return null;
        }
        [$user, $password] = explode(':', $decoded, 2);
        return [$user, $password];
    }

    private function verify(string $user, string $password): bool
    {
        if ($this->check !== null) {
            // Not cached: the Closure may consult state that changes (a disabled account).
            return ($this->check)($user, $password) === true;
        }
        $key = hash_hmac('sha256', $user . "\0" . $password, $this->cacheKey, true);
        if (isset($this->verified[$key])) {
            return true;
        }
        $hash = $this->users[$user] ?? null;
        // Unknown user: spend the same time on a real hash, then refuse.
        $ok = password_verify($password, $hash ?? $this->decoy) && $hash !== null;
        if ($ok) {
            if (\count($this->verified) >= self::CACHE_SIZE) {
                $this->verified = [];
            }
            $this->verified[$key] = true;
        }
        return $ok;
    }
}
