<?php

declare(strict_types=1);

namespace Kiln\App\Middleware;

use Kiln\App\Middleware;
use Kiln\App\Session;
use Kiln\Http\Cookie;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Store\Session\SessionStore;

/**
 * Gives each request a Session (the attribute Session::class; handlers take it as a `Session $session`
 * parameter) and, when the response leaves, writes it and sets or drops the cookie. The cookie is the
 * classic scripts' (PHPSESSID unless told), so both tiers share one session; it is HttpOnly, SameSite=Lax,
 * without an expiry (it ends with the browser), and Secure when the request came over HTTPS — as trusted
 * proxies say it did (Request::scheme()). If the handler throws, nothing is written.
 */
final class Sessions implements Middleware
{
    public function __construct(
        private readonly SessionStore $store,
        private readonly string $cookie = 'PHPSESSID',
        private readonly ?string $domain = null,
        private readonly string $sameSite = Cookie::SAME_SITE_LAX,
    ) {
        new Cookie($cookie, sameSite: $sameSite, secure: true); // a bad name or SameSite fails here, at boot
    }

    public function process(Request $request, RequestHandler $next): Response
    {
        $session = new Session($this->store, $request->cookie($this->cookie));
        $request->setAttribute(Session::class, $session);
        $response = $next->handle($request);
        $id = $session->commit();
        if ($id === '') {
            $response->setCookie(Cookie::expired($this->cookie, '/', $this->domain));
        } elseif ($id !== null) {
            $secure = $request->scheme() === 'https';
            $response->setCookie(new Cookie($this->cookie, $id, domain: $this->domain, secure: $secure, sameSite: $this->sameSite));
        }
        return $response;
    }
}
