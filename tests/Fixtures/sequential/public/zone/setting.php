<?php

declare(strict_types=1);

// Changes the zone through the setting only, as a script may: each request must see its own choice.
ini_set('date.timezone', (string) ($_GET['zone'] ?? 'Asia/Tokyo'));
echo date_default_timezone_get();
