<?php

declare(strict_types=1);

return [ApiStatusFixture::class, 'show'];
