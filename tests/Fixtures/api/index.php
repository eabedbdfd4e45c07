<?php

declare(strict_types=1);

return static fn(): string => 'api.index';
